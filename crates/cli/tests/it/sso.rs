//! `mgds login --sso` against a real OpenID provider (npm's `oidc-provider`, see
//! `tests/oidc.sh`), with a scripted system browser (`tests/oidc/browser.py`, as `$BROWSER`):
//! the profile keeps a refresh token, each command signs in with a fresh access token, and a
//! provider that forgot the sign-in makes the command say to sign in again.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mgds_oidc::testing::TestProvider;
use serde_json::json;

use super::{Serve, mgds, ok};

const RESOURCE: &str = "https://mgds.test/api";

/// Runs `cmd`, killed after `limit` (a sign-in that never comes back waits minutes).
fn run_within(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let started = Instant::now();
    let killer = std::thread::spawn(move || {
        while started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(200));
            if std::fs::metadata(format!("/proc/{pid}")).is_err() {
                return;
            }
        }
        let _ = Command::new("kill").arg(pid.to_string()).status();
    });
    let out = child.wait_with_output().unwrap();
    let _ = killer.join();
    assert!(
        started.elapsed() < limit,
        "the command did not finish within {limit:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn login_with_sso_keeps_a_refresh_token_and_each_command_signs_in_with_it() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cfg, data) = (dir.path().join("cfg"), dir.path().join("data"));
    let accounts = json!({"bob-sub": {"email": "bob@lab.example", "email_verified": true, "groups": ["lab"]}});
    let mut provider =
        rt.block_on(TestProvider::start(json!({"port": 0, "accounts": accounts, "resource": RESOURCE, "clients": []})));
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "unused by the native client\n").unwrap();
    let serve = Serve::start(
        &data,
        &[
            "--sso-issuer",
            &provider.issuer,
            "--sso-client-id",
            "mgds-web",
            "--sso-client-secret-file",
            secret.to_str().unwrap(),
            "--sso-native-client-id",
            "mgds-desktop",
            "--sso-audience",
            RESOURCE,
            "--sso-scopes",
            "openid email profile groups",
            "--sso-place",
            "groups:lab=Microbiology:member",
            "--sso-name",
            "Lab SSO",
        ],
    );
    let native = json!({"clients": [{"client_id": "mgds-desktop", "application_type": "native",
        "token_endpoint_auth_method": "none", "redirect_uris": ["http://127.0.0.1/callback"],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}]});
    rt.block_on(provider.restart(native.clone()));

    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oidc/browser.py").canonicalize().unwrap();
    let keychain = std::env::var_os("MGDS_TEST_KEYCHAIN").is_some();
    let profile = format!("sso{}", std::process::id());
    let mut login = mgds(&cfg, &data);
    login.args(["login", "--sso", "--profile", &profile, "--base-url", &serve.url]);
    if !keychain {
        login.arg("--store-key-in-file");
    }
    login.env("BROWSER", &browser).env("MGDS_TEST_OIDC_ACCOUNT", "bob-sub");
    let out = run_within(&mut login, Duration::from_secs(60));
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("{}/auth?", provider.issuer)),
        "the address is printed for a browser elsewhere: {said}"
    );
    assert!(said.contains("as bob@lab.example by single sign-on"), "{said}");
    let config = std::fs::read_to_string(cfg.join("config.toml")).unwrap();
    assert!(config.contains(&provider.issuer) && config.contains("mgds-desktop"), "{config}");
    assert!(!config.contains("refresh"), "no token in config.toml: {config}");

    // Each command exchanges the kept refresh token for an access token.
    let me = ok(&mgds(&cfg, &data).args(["--profile", &profile, "whoami"]).output().unwrap());
    assert_eq!(me.trim(), "bob@lab.example");
    let listed = mgds(&cfg, &data).args(["--profile", &profile, "samples", "list"]).output().unwrap();
    ok(&listed);

    // Signing out revokes the refresh token at the provider, then forgets it.
    let kept = mgds_profiles::profile::load_key(&cfg, &profile).unwrap().expect("a refresh token is kept").0;
    let out = mgds(&cfg, &data).args(["--profile", &profile, "logout"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success() && said.contains("refresh token revoked"), "{said}");
    assert!(mgds_profiles::profile::load_key(&cfg, &profile).unwrap().is_none(), "forgotten here");
    let refused = rt.block_on(async {
        let p = mgds_oidc::Provider::discover(mgds_oidc::http_client("test").unwrap(), &provider.issuer).await.unwrap();
        let client = mgds_oidc::ClientAuth { client_id: "mgds-desktop".into(), secret: None };
        p.refresh(&client, &kept).await
    });
    assert!(matches!(refused, Err(mgds_oidc::Error::Refused { .. })), "revoked at the provider: {refused:?}");

    // The provider forgets its sign-ins (a restart keeps none): the command says what to do.
    let out = run_within(
        mgds(&cfg, &data)
            .args(["login", "--sso", "--profile", &profile, "--base-url", &serve.url])
            .args(if keychain { &[][..] } else { &["--store-key-in-file"][..] })
            .env("BROWSER", &browser)
            .env("MGDS_TEST_OIDC_ACCOUNT", "bob-sub"),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    rt.block_on(provider.restart(native));
    let out = mgds(&cfg, &data).args(["--profile", &profile, "whoami"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("has ended") && said.contains("mgds login --sso"), "{said}");
}
