//! A tiny TCP proxy on 127.0.0.1:0 in front of the real service, used as the client's HTTP
//! proxy, that injects faults: it cuts chosen connections part-way, or answers 503 itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Which way bytes are counted before a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to service (a request body).
    Up,
    /// Service to client (a response body).
    Down,
}

/// What the proxy does wrong.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// Cut the first `times` connections carrying a request `method ...path...`, after `after`
    /// bytes in `direction` (counted from the request line going up, or from the first answer
    /// byte going down).
    Cut { method: &'static str, path: &'static str, direction: Direction, after: usize, times: usize },
    /// Answer the first `count` connections' first request with 503 itself.
    Fail503 { count: usize },
}

/// What the proxy saw.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections: AtomicUsize,
    /// Connections cut.
    pub cuts: AtomicUsize,
    /// Requests answered with 503.
    pub failed: AtomicUsize,
    /// Requests passed on to the service in `Fail503` mode.
    pub forwarded: AtomicUsize,
    /// Requests matching the cut rule that were seen.
    pub matched: AtomicUsize,
}

/// A running proxy.
pub struct Proxy {
    pub url: String,
    pub stats: Arc<Stats>,
}

impl Proxy {
    /// Starts a proxy forwarding to the service at `target` (`http://127.0.0.1:PORT`).
    pub async fn start(target: &str, fault: Fault) -> Proxy {
        let target = target.trim_start_matches("http://").trim_end_matches('/').to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stats = Arc::new(Stats::default());
        let remaining = Arc::new(AtomicUsize::new(match fault {
            Fault::Cut { times, .. } => times,
            Fault::Fail503 { count } => count,
        }));
        let s = stats.clone();
        tokio::spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else { return };
                s.connections.fetch_add(1, Ordering::SeqCst);
                let (target, stats, remaining) = (target.clone(), s.clone(), remaining.clone());
                tokio::spawn(async move {
                    match fault {
                        Fault::Cut { method, path, direction, after, .. } => {
                            cut_connection(conn, &target, method, path, direction, after, &stats, &remaining).await
                        }
                        Fault::Fail503 { .. } => fail_connection(conn, &target, &stats, &remaining).await,
                    }
                });
            }
        });
        Proxy { url, stats }
    }
}

/// Takes one of the remaining faults, if any are left.
fn claim(remaining: &AtomicUsize) -> bool {
    remaining.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where a request line `METHOD ...path...\r\n` starts in `buf`, if one is there whole. (It
/// need not start a line: the previous request's body has no line end.)
fn find_request(buf: &[u8], method: &str, path: &str) -> Option<usize> {
    let pat = format!("{method} ");
    let mut from = 0;
    while let Some(p) = find(&buf[from..], pat.as_bytes()) {
        let pos = from + p;
        if let Some(end) = find(&buf[pos..], b"\r\n")
            && find(&buf[pos..pos + end], path.as_bytes()).is_some()
        {
            return Some(pos);
        }
        from = pos + 1;
    }
    None
}

#[allow(clippy::too_many_arguments)]
async fn cut_connection(
    client: TcpStream,
    target: &str,
    method: &'static str,
    path: &'static str,
    direction: Direction,
    after: usize,
    stats: &Stats,
    remaining: &AtomicUsize,
) {
    let Ok(server) = TcpStream::connect(target).await else { return };
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let armed_down = AtomicBool::new(false);
    let up = async {
        let mut window: Vec<u8> = Vec::new();
        let mut window_start = 0usize; // absolute offset of window[0]
        let mut cut_at: Option<usize> = None; // absolute offset to cut at
        let mut done_scanning = false;
        let mut read_so_far = 0usize; // absolute offset of the next chunk
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match cr.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = sw.shutdown().await;
                    return std::future::pending::<()>().await;
                }
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            let chunk_start = read_so_far;
            read_so_far += n;
            if !done_scanning {
                window.extend_from_slice(chunk);
                if let Some(pos) = find_request(&window, method, path) {
                    stats.matched.fetch_add(1, Ordering::SeqCst);
                    done_scanning = true;
                    if claim(remaining) {
                        match direction {
                            Direction::Up => cut_at = Some(window_start + pos + after),
                            Direction::Down => armed_down.store(true, Ordering::SeqCst),
                        }
                    }
                } else if window.len() > 8192 {
                    let drop = window.len() - 4096;
                    window.drain(..drop);
                    window_start += drop;
                }
            }
            if let Some(cut) = cut_at
                && cut < chunk_start + n
            {
                let keep = cut.saturating_sub(chunk_start);
                let _ = sw.write_all(&chunk[..keep]).await;
                let _ = sw.flush().await;
                stats.cuts.fetch_add(1, Ordering::SeqCst);
                return;
            }
            if sw.write_all(chunk).await.is_err() {
                return;
            }
        }
    };
    let down = async {
        let mut sent_after_arming = 0usize;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = cw.shutdown().await;
                    return;
                }
                Ok(n) => n,
            };
            if armed_down.load(Ordering::SeqCst) {
                if sent_after_arming + n >= after {
                    let keep = after - sent_after_arming;
                    let _ = cw.write_all(&buf[..keep]).await;
                    let _ = cw.flush().await;
                    stats.cuts.fetch_add(1, Ordering::SeqCst);
                    return;
                }
                sent_after_arming += n;
            }
            if cw.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    // Whichever side ends first ends the connection: dropping the halves closes both sockets.
    tokio::select! {
        () = up => {}
        () = down => {}
    }
}

async fn fail_connection(mut client: TcpStream, target: &str, stats: &Stats, remaining: &AtomicUsize) {
    // Read the request head and its body.
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let head_end = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p + 4;
        }
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    if claim(remaining) {
        stats.failed.fetch_add(1, Ordering::SeqCst);
        let body = r#"{"message": "the service is briefly unavailable", "status": 503}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(answer.as_bytes()).await;
        let _ = client.shutdown().await;
        return;
    }
    stats.forwarded.fetch_add(1, Ordering::SeqCst);
    let Ok(mut server) = TcpStream::connect(target).await else { return };
    if server.write_all(&buf).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

#[test]
fn finds_request_lines() {
    let buf = b"xx\r\nPOST http://127.0.0.1:1/storage/mgds HTTP/1.1\r\nhost: a\r\n\r\n";
    assert_eq!(find_request(buf, "POST", "/storage/"), Some(4));
    assert_eq!(find_request(buf, "GET", "/storage/"), None);
    assert_eq!(find_request(b"POST http://a/storage/x", "POST", "/storage/"), None);
    assert_eq!(find_request(b"{\"a\":1}POST http://a/storage/x HTTP/1.1\r\n", "POST", "/storage/"), Some(7));
}
