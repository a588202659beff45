//! What the crate's tests share: a real MGDS service on loopback over a data folder of the
//! test's own (never a mock of our own server), and clients for the people on it.

use std::path::Path;

use mgds_client::Client;

/// A local service started for a test.
pub struct TestService {
    /// Its address.
    pub url: String,
    /// Its state (the database, for `mgds_server::admin`).
    pub state: mgds_server::AppState,
}

/// What the service is started with.
#[derive(Debug, Clone, Copy, Default)]
pub struct With {
    /// The demo references installed first (classification, panel, alignment, profile jobs).
    pub demo: bool,
    /// Analyses run at once (0: none run); engines run on the workers' threads, as a test
    /// binary cannot start itself as an engine process.
    pub workers: usize,
}

impl TestService {
    /// Starts a service over `data` (made if missing).
    pub async fn start(data: &Path, with: With) -> TestService {
        if with.demo {
            mgds_server::references::install_demo(data).unwrap();
        }
        // Controls analyses score as the service binaries have them score.
        mgds_server::controls::provide(
            crate::contamination::score_controls,
            crate::contamination::SCORING_VERSION,
            crate::contamination::controls_args_schema(),
        );
        let mut config = mgds_server::Config::new(data);
        config.runner.workers = with.workers;
        if with.workers > 0 {
            config.runner.engine = mgds_server::engine::EngineHost::InProcess;
        }
        let (url, state) = mgds_server::spawn(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
        TestService { url, state }
    }

    /// A new user `email` (in `organization`, if any) and a client signed in as them.
    pub async fn user_in(&self, email: &str, organization: Option<&str>) -> Client {
        let key =
            mgds_server::admin::create_user(&self.state.db, email, organization, mgds_server::admin::Role::Member)
                .await
                .unwrap()
                .api_key;
        Client::builder(&self.url).api_key(&key).build().unwrap()
    }

    /// A new user `email` and a client signed in as them.
    pub async fn user(&self, email: &str) -> Client {
        self.user_in(email, None).await
    }
}
