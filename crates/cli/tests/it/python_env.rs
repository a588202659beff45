//! The Python environment of the real `onecodex` client, pinned in
//! `tests/onecodex/requirements.txt`: made once into a cache folder outside the checkout
//! (`$MGDS_CACHE_DIR`, else `$XDG_CACHE_HOME/mgds`, else `~/.cache/mgds`), named by a hash of the
//! requirements, and reused while they stay the same. The tests and the client benchmark share it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder of the Python tests and of their requirements.
pub fn python_tests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/onecodex")
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MGDS_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("mgds");
    }
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/mgds")
}

/// The Python of a virtual environment with the pinned requirements, made if missing (one
/// process at a time: the others wait on a lock file). Its `bin/` holds the `onecodex` command.
pub fn python() -> PathBuf {
    let requirements = python_tests().join("requirements.txt");
    let text = std::fs::read(&requirements).expect("tests/onecodex/requirements.txt");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &text {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    let root = cache_dir();
    std::fs::create_dir_all(&root).unwrap();
    let venv = root.join(format!("python-onecodex-{hash:016x}"));
    let python = venv.join("bin/python");
    let lock = std::fs::File::create(root.join(".python-onecodex.lock")).unwrap();
    lock.lock().unwrap();
    if !venv.join(".complete").exists() {
        let _ = std::fs::remove_dir_all(&venv);
        eprintln!("making the onecodex Python environment in {} (once)", venv.display());
        let ok = Command::new("python3").arg("-m").arg("venv").arg(&venv).status().expect("python3 runs");
        assert!(ok.success(), "python3 -m venv failed; install python3 and python3-venv");
        let ok = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", "-r"])
            .arg(&requirements)
            .status()
            .unwrap();
        assert!(ok.success(), "pip could not install {}", requirements.display());
        std::fs::write(venv.join(".complete"), "").unwrap();
    }
    python
}
