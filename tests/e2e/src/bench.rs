//! What the benchmarks share: the memory of the app's processes, and numbers in a table.

/// Memory of the app and its WebKit processes (MB).
#[derive(Default, Debug, Clone, Copy)]
pub struct Memory {
    /// Resident memory of them all.
    pub rss: f64,
    /// Proportional memory of them all (shared pages split between the processes using them).
    pub pss: f64,
    /// PSS of the app's own process (with the embedded service).
    pub app_pss: f64,
    /// PSS of WebKit's web process (the page).
    pub web_pss: f64,
    /// PSS of WebKit's network process.
    pub network_pss: f64,
}

/// Resident and proportional memory (MB) of the app and the WebKit processes it started: the
/// processes beneath `driver` (tauri-driver starts the app; its WebKitWebDriver aside), so
/// another MGDS window or WebKit app on the same machine is not counted.
pub fn memory(driver: u32) -> Memory {
    let mut m = Memory::default();
    let Ok(dir) = std::fs::read_dir("/proc") else { return m };
    // Each process's parent, to find the ones beneath the driver.
    let mut parent = std::collections::HashMap::new();
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // The fields after the command name (which may hold spaces), closed by ')'.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.insert(pid, ppid);
        }
    }
    let beneath = |mut pid: u32| {
        while let Some(&p) = parent.get(&pid) {
            if p == driver {
                return true;
            }
            if p <= 1 {
                return false;
            }
            pid = p;
        }
        false
    };
    for &pid in parent.keys() {
        let p = std::path::PathBuf::from(format!("/proc/{pid}"));
        // The driver's own WebKitWebDriver is not the app's.
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if comm.trim() == "WebKitWebDriver" || !beneath(pid) {
            continue;
        }
        let rollup = std::fs::read_to_string(p.join("smaps_rollup")).unwrap_or_default();
        let mb = |name: &str| {
            rollup
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
                .unwrap_or(0.0)
                / 1024.0
        };
        let (rss, pss) = (mb("Rss:"), mb("Pss:"));
        m.rss += rss;
        m.pss += pss;
        let comm = comm.trim();
        if comm.starts_with("WebKitWebProces") {
            m.web_pss += pss;
        } else if comm.starts_with("WebKitNetworkPr") {
            m.network_pss += pss;
        } else {
            m.app_pss += pss;
        }
    }
    m
}

/// The median of `v` (NaN when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A count with thousands separators ("10,000").
pub fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
