//! Every kind of error, mapped from the real service's answers, and the retry rules: bounded
//! retries of what is safe, never a repeated create.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mgds_api::Visibility;
use mgds_client::{AuthStyle, Client, Error, RetryPolicy};

use super::proxy::{Fault, Proxy};
use super::{Service, fastq_bytes, quick_retry, write_file};

#[tokio::test]
async fn each_error_kind_from_the_service() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let bob = svc.user("bob@lab.example.org").await;
    let a = svc.client(&alice);
    let b = svc.client(&bob);

    // 401: a wrong key, with a hint a person can act on.
    let wrong = Client::builder(&svc.url).api_key("not-a-key").retry(quick_retry()).build().unwrap();
    let err = wrong.account().await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    assert_eq!(err.status(), Some(401));
    assert!(err.to_string().contains("check it or run `mgds login`"), "{err}");
    // Anonymous on a protected route: also 401.
    let anon = Client::builder(&svc.url).build().unwrap();
    assert!(matches!(anon.account().await, Err(Error::Unauthorized { .. })));

    // 403: Bob can see Alice's public sample but may not change it.
    let path = write_file(&svc.scratch(), "a.fastq", &fastq_bytes(500));
    let sample = a.samples().upload(&path).send().await.unwrap();
    a.samples().update(&sample).visibility(Visibility::Public).send().await.unwrap();
    let err = b.samples().delete(&sample).await.unwrap_err();
    assert!(matches!(err, Error::Forbidden { .. }), "{err:?}");
    assert!(err.service_message().unwrap().contains("owner"), "{err}");
    // Anonymous callers see it too.
    assert_eq!(anon.samples().get(&sample).await.unwrap().uri, sample.uri);

    // 404: nothing there, or not visible.
    let err = a.samples().get("0000000000000000").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    a.samples().update(&sample).visibility(Visibility::Private).send().await.unwrap();
    assert!(matches!(b.samples().get(&sample).await, Err(Error::NotFound { .. })));

    // 409: duplicate project name and duplicate external_sample_id.
    a.projects().create("dup_name").send().await.unwrap();
    let err = b.projects().create("dup_name").send().await.unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err:?}");
    assert!(err.to_string().contains("already exists"), "{err}");
    a.samples().preupload().external_sample_id("X1").send().await.unwrap();
    assert!(matches!(a.samples().preupload().external_sample_id("X1").send().await, Err(Error::Conflict { .. })));

    // 400 with the service's message.
    let err = a.tags().create("", &sample).await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { status: 400, .. }), "{err:?}");
    assert!(err.to_string().contains("name must be 1 to 30 characters"), "{err}");

    // X-API-Key works as well as Basic.
    let header = Client::builder(&svc.url).api_key(&alice.key).auth_style(AuthStyle::Header).build().unwrap();
    assert_eq!(header.account().await.unwrap().email.as_deref(), Some("alice@lab.example.org"));
}

#[tokio::test]
async fn rate_limited_with_the_wait() {
    let svc = Service::start_with(|c| {
        c.auth_failure_limit = 2;
        c.auth_failure_window = Duration::from_secs(300);
    })
    .await;
    let wrong = Client::builder(&svc.url).api_key("wrong").retry(quick_retry()).build().unwrap();
    for _ in 0..2 {
        assert!(matches!(wrong.account().await, Err(Error::Unauthorized { .. })));
    }
    let start = Instant::now();
    let err = wrong.account().await.unwrap_err();
    let Error::RateLimited { retry_after: Some(wait), .. } = &err else { panic!("{err:?}") };
    assert!(*wait > Duration::from_secs(200) && *wait <= Duration::from_secs(300), "{wait:?}");
    // A wait longer than the policy allows is returned at once, not slept through.
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(err.to_string().contains("wait and try again"), "{err}");
}

#[tokio::test]
async fn plain_http_to_another_machine_is_refused() {
    let err = Client::new("http://example.org", "key").unwrap_err();
    assert!(matches!(err, Error::InsecureUrl { .. }), "{err:?}");
    assert!(err.to_string().contains("use https://"), "{err}");
    assert!(matches!(Client::new("http://192.168.1.10:8080", "k"), Err(Error::InsecureUrl { .. })));
    assert!(matches!(Client::new("not a url", "k"), Err(Error::InvalidUrl { .. })));
    // HTTPS anywhere and plain HTTP to this machine are fine.
    Client::new("https://example.org", "key").unwrap();
    Client::new("http://localhost:8080", "key").unwrap();
    Client::new("http://127.0.0.1:8080/api/v1/", "key").unwrap();
}

/// A port nothing listens on.
async fn dead_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn connection_refused_is_retried_a_bounded_number_of_times() {
    let port = dead_port().await;
    let c = Client::builder(&format!("http://127.0.0.1:{port}"))
        .api_key("k")
        .retry(RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_millis(200),
            max_retry_after: Duration::from_secs(1),
        })
        .build()
        .unwrap();
    let start = Instant::now();
    let err = c.account().await.unwrap_err();
    let elapsed = start.elapsed();
    assert!(matches!(err, Error::Transport { attempts: 3, .. }), "{err:?}");
    assert!(elapsed >= Duration::from_millis(50), "it waited between attempts: {elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "bounded: {elapsed:?}");
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "{err}");
    // A create is retried too when the connection could not even be made: nothing was sent.
    let err = c.samples().preupload().send().await.unwrap_err();
    assert!(matches!(err, Error::Transport { attempts: 3, .. }), "{err:?}");
}

#[tokio::test]
async fn server_errors_are_retried_for_reads_but_creates_are_never_repeated() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;

    // A read through a proxy that answers the first request with 503: retried, then fine.
    let proxy = Proxy::start(&svc.url, Fault::Fail503 { count: 1 }).await;
    let c = svc.client_via(&alice, &proxy.url, quick_retry());
    let account = c.account().await.unwrap();
    assert_eq!(account.email.as_deref(), Some("alice@lab.example.org"));
    assert_eq!(proxy.stats.failed.load(Ordering::SeqCst), 1);
    assert_eq!(proxy.stats.forwarded.load(Ordering::SeqCst), 1);

    // A create that answered 503 may or may not have happened: it is not sent again.
    let proxy = Proxy::start(&svc.url, Fault::Fail503 { count: 1 }).await;
    let c = svc.client_via(&alice, &proxy.url, quick_retry());
    let err = c.samples().preupload().send().await.unwrap_err();
    assert!(matches!(err, Error::Server { status: 503, .. }), "{err:?}");
    assert!(err.to_string().contains("briefly unavailable"), "{err}");
    assert_eq!(proxy.stats.connections.load(Ordering::SeqCst), 1, "sent once only");
    assert!(svc.client(&alice).samples().list().per_page(5).send().await.unwrap().items.is_empty());

    // Reads that keep failing give up after the policy's attempts.
    let proxy = Proxy::start(&svc.url, Fault::Fail503 { count: 100 }).await;
    let c = svc.client_via(&alice, &proxy.url, quick_retry());
    assert!(matches!(c.account().await, Err(Error::Server { status: 503, .. })));
    assert_eq!(proxy.stats.failed.load(Ordering::SeqCst), 3);
}
