//! `mgds` processes of the multi-process tests and the scale benchmark (which includes this
//! file): killed when dropped, their stderr kept as it comes, their stdout read line by line.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A running process.
pub struct Proc {
    pub child: Child,
    // Kept open while the process runs: it may write to it again (a closed pipe would fail it).
    stdout: Option<BufReader<ChildStdout>>,
    log: Arc<Mutex<String>>,
}

impl Proc {
    /// Starts `cmd` with its stdout and stderr piped.
    pub fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("mgds starts");
        let log = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("stderr");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let stdout = child.stdout.take().map(BufReader::new);
        Proc { child, stdout, log }
    }

    /// `mgds serve`: the process and the address it listens on (its first line).
    pub fn serve(cmd: Command) -> (Proc, String) {
        let mut p = Proc::spawn(cmd);
        let line = p.read_line();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("mgds serve did not start: {line:?}\n{}", p.log()))
            .to_string();
        (p, url)
    }

    /// The next line the process writes on stdout.
    pub fn read_line(&mut self) -> String {
        let mut line = String::new();
        if let Some(out) = self.stdout.as_mut() {
            out.read_line(&mut line).expect("a line on stdout");
        }
        line
    }

    /// What it wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Analyses this process ran to their end (its log says so for each).
    pub fn completed(&self) -> usize {
        self.log().lines().filter(|l| l.contains("analysis complete")).count()
    }

    /// Stops it at once (SIGKILL), as a power cut would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its peak resident memory (VmHWM) so far, in bytes (Linux).
    #[allow(dead_code)]
    pub fn peak(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(0, |kb| kb * 1024)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}
