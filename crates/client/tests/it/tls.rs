//! HTTPS with a private CA, as behind a TLS-inspecting proxy: trusted only with the extra CA
//! file. The service is started over TLS with `bind` + `serve` (`spawn` has no TLS).

use mgds_client::{Client, Error, RetryPolicy};
use mgds_server::{AppState, Config, Tls, admin};

#[tokio::test]
async fn extra_ca_file_is_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let bound =
        mgds_server::bind("127.0.0.1:0".parse().unwrap(), Some(&Tls { cert: cert_path.clone(), key: key_path }))
            .await
            .unwrap();
    let url = bound.url().replace("127.0.0.1", "localhost");
    assert!(url.starts_with("https://"));
    let state = AppState::open(&Config::new(dir.path().join("data"))).await.unwrap().with_public_url(&url);
    let s = state.clone();
    tokio::spawn(async move { mgds_server::serve(bound, s, std::future::pending()).await });
    let key =
        admin::create_user(&state.db, "lab@example.org", None, mgds_server::admin::Role::Member).await.unwrap().api_key;

    // Not trusted without the CA: a transport error naming the address.
    let plain = Client::builder(&url).api_key(&key).retry(RetryPolicy::none()).build().unwrap();
    let err = plain.account().await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");

    // Trusted with it, uploads and downloads included.
    let c = Client::builder(&url).api_key(&key).extra_ca_file(&cert_path).build().unwrap();
    assert_eq!(c.account().await.unwrap().email.as_deref(), Some("lab@example.org"));
    let bytes = super::fastq_bytes(50_000);
    let path = super::write_file(dir.path(), "tls.fastq", &bytes);
    let sample = c.samples().upload(&path).send().await.unwrap();
    let dest = dir.path().join("back.fastq");
    c.samples().download(&sample, &dest).await.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), bytes);

    // A CA file that is not PEM is refused with its name.
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let err = Client::builder(&url).extra_ca_file(&bad).build().unwrap_err();
    assert!(matches!(err, Error::CaCertificate { .. }), "{err:?}");
    assert!(err.to_string().contains("bad.pem"), "{err}");
    let err = Client::builder(&url).extra_ca_file(dir.path().join("missing.pem")).build().unwrap_err();
    assert!(matches!(err, Error::CaCertificate { .. }), "{err:?}");
}
