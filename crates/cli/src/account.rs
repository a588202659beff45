//! `mgds login`, `logout`, `whoami` and `profiles`.

use anyhow::{Context, Result, bail};
use mgds_client::Client;

use crate::connect::{self, Global};
use crate::profile::{self, Config, KeyStore, LOCAL, Profile};

/// Options of `mgds login`.
#[derive(clap::Args, Debug)]
pub struct LoginArgs {
    /// Keep the key in a file readable only by you when there is no OS keychain.
    #[arg(long)]
    pub store_key_in_file: bool,
    /// Sign in with the service's single sign-on (your organisation's account) instead of an
    /// API key: the system browser opens at the sign-in page (the address is printed too, for
    /// a browser elsewhere), and the keychain keeps what lets this profile stay signed in.
    #[arg(long)]
    pub sso: bool,
}

/// Reads the API key from the option, the environment, or a hidden prompt (or one line of stdin).
fn read_key(g: &Global) -> Result<String> {
    if let Some(k) = &g.api_key {
        return Ok(k.trim().to_string());
    }
    let key = if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        rpassword::prompt_password("API key: ")?
    } else {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        line
    };
    let key = key.trim().to_string();
    if key.is_empty() {
        bail!("no API key given; pass --api-key KEY, set MGDS_API_KEY, or type it at the prompt");
    }
    Ok(key)
}

/// `mgds login`: checks the key with `/account`, then stores the profile and its key.
pub async fn login(g: &Global, args: &LoginArgs) -> Result<()> {
    let dir = profile::config_dir()?;
    let mut config = Config::load(&dir)?;
    let name = g.profile.clone().unwrap_or_else(|| {
        if g.base_url.is_some() { "default".into() } else { config.current.clone().unwrap_or_else(|| LOCAL.into()) }
    });
    let base_url = match (&g.base_url, config.profiles.get(&name)) {
        (Some(u), _) => u.clone(),
        (None, Some(p)) => p.base_url.clone(),
        (None, None) if name == LOCAL => {
            bail!(
                "the local profile needs no login: its key is made and kept for you; use --base-url URL to sign in to another service"
            )
        }
        (None, None) => bail!("profile {name:?} is new: give the service's address with --base-url URL"),
    };
    if base_url == LOCAL {
        bail!("the local profile needs no login: its key is made and kept for you");
    }
    if args.sso {
        if g.api_key.is_some() {
            bail!("--sso signs in without an API key; leave out --api-key (and MGDS_API_KEY)");
        }
        return login_sso(&dir, config, &name, &base_url, args.store_key_in_file).await;
    }
    let key = read_key(g)?;
    let client = Client::new(&base_url, key.clone())?;
    let account = client.account().await.with_context(|| format!("could not sign in to {base_url}"))?;
    let store = profile::store_key(&dir, &name, &key, args.store_key_in_file)?;
    config.profiles.insert(name.clone(), Profile::with_key(base_url.clone()));
    config.current = Some(name.clone());
    config.save(&dir)?;
    eprintln!(
        "signed in to {base_url} as {} (profile {name:?}); key kept in {}",
        account.email.unwrap_or_else(|| account.user.uri.clone()),
        match store {
            KeyStore::Keychain => "the OS keychain",
            KeyStore::File => "a file only you can read (no OS keychain was available)",
        }
    );
    Ok(())
}

/// `mgds login --sso`: signs in at the service's provider in the browser, checks the access
/// token with `/account`, then stores the profile and its refresh token.
async fn login_sso(dir: &std::path::Path, mut config: Config, name: &str, base_url: &str, in_file: bool) -> Result<()> {
    let signed_in = mgds_profiles::sso::sign_in(base_url, |url| {
        eprintln!(
            "Sign in with your organisation's account in the browser that opens, or open this address in a browser on this computer:\n  {url}"
        );
        if let Err(e) = mgds_profiles::sso::open_in_browser(url) {
            eprintln!("({e:#}; open the address yourself)");
        }
        eprintln!("waiting for the browser to come back (5 minutes at most)...");
        Ok(())
    })
    .await
    .with_context(|| format!("could not sign in to {base_url}"))?;
    let client = Client::builder(base_url)
        .access_token(mgds_client::AccessToken::new(signed_in.tokens.access_token.clone()))
        .build()?;
    let account = client.account().await.with_context(|| format!("{base_url} did not take the sign-in"))?;
    let store = mgds_profiles::sso::keep(dir, name, &signed_in, in_file)?;
    config
        .profiles
        .insert(name.to_string(), Profile { base_url: base_url.to_string(), sso: Some(signed_in.profile.clone()) });
    config.current = Some(name.to_string());
    config.save(dir)?;
    eprintln!(
        "signed in to {base_url} as {} by single sign-on (profile {name:?}); kept in {}",
        account.email.or(signed_in.email).unwrap_or_else(|| account.user.uri.clone()),
        match store {
            KeyStore::Keychain => "the OS keychain",
            KeyStore::File => "a file only you can read (no OS keychain was available)",
        }
    );
    Ok(())
}

/// `mgds logout`: forgets the profile's stored key.
pub async fn logout(g: &Global) -> Result<()> {
    let dir = profile::config_dir()?;
    let config = Config::load(&dir)?;
    let (name, p) = config.resolve(g.profile.as_deref())?;
    let what = if p.sso.is_some() { "single sign-on" } else { "API key" };
    if let Some(sso) = &p.sso {
        // Signed out at the provider too, where it can revoke the refresh token; the token is
        // forgotten here either way.
        match mgds_profiles::sso::sign_out(&dir, &name, sso).await {
            Ok(true) => eprintln!("signed out at {} (its refresh token revoked)", sso.issuer),
            Ok(false) => {}
            Err(e) => {
                eprintln!("could not sign out at {} ({e:#}); the token is forgotten here all the same", sso.issuer)
            }
        }
    }
    if profile::delete_key(&dir, &name)? {
        eprintln!("forgot the {what} of profile {name:?}");
    } else {
        eprintln!("profile {name:?} had no stored {what}");
    }
    Ok(())
}

/// `mgds whoami`: the account the current options reach.
pub async fn whoami(g: &Global, json: bool) -> Result<()> {
    let ctx = connect::connect(g).await?;
    let account = ctx.client.account().await?;
    if json {
        return crate::output::print_one(&account);
    }
    println!("{}", account.email.clone().unwrap_or_default());
    eprintln!(
        "user {} at {}{}",
        account.user.id(),
        ctx.client.base_url(),
        account.organization.map(|o| format!(", organisation {o}")).unwrap_or_default()
    );
    Ok(())
}

/// `mgds profiles ...`.
#[derive(clap::Subcommand, Debug)]
pub enum ProfilesCommand {
    /// List profiles (tab-separated: current mark, name, address).
    List,
    /// Make a profile the current one.
    Use {
        /// The profile.
        name: String,
    },
    /// Remove a profile and its stored key.
    Remove {
        /// The profile.
        name: String,
    },
}

/// Runs a `profiles` command.
pub fn profiles(cmd: &ProfilesCommand) -> Result<()> {
    let dir = profile::config_dir()?;
    let mut config = Config::load(&dir)?;
    let current = config.current.clone().unwrap_or_else(|| LOCAL.into());
    match cmd {
        ProfilesCommand::List => {
            if !config.profiles.contains_key(LOCAL) {
                println!("{}\t{LOCAL}\tthe local service (built in)", if current == LOCAL { "*" } else { "" });
            }
            for (name, p) in &config.profiles {
                println!("{}\t{name}\t{}", if *name == current { "*" } else { "" }, p.base_url);
            }
        }
        ProfilesCommand::Use { name } => {
            config.resolve(Some(name))?;
            config.current = Some(name.clone());
            config.save(&dir)?;
            eprintln!("now using profile {name:?}");
        }
        ProfilesCommand::Remove { name } => {
            if config.profiles.remove(name).is_none() {
                bail!("there is no profile {name:?}");
            }
            if config.current.as_deref() == Some(name) {
                config.current = None;
            }
            config.save(&dir)?;
            profile::delete_key(&dir, name)?;
            eprintln!("removed profile {name:?}");
        }
    }
    Ok(())
}
