// A real OpenID Connect provider for the tests (panva's oidc-provider), on 127.0.0.1 only.
//
// Reads one JSON object from stdin (to its end), then listens and prints one line to stdout,
// {"issuer":"http://127.0.0.1:PORT"}; everything else goes to stderr. The object's fields:
//   port              0 (any free port) or the port to listen on
//   clients           oidc-provider client metadata, passed through
//   accounts          { sub: claims }; the sign-in form's login is the sub, any password
//   resource          optional resource indicator: access tokens become RS256 JWTs for it
//                     (aud), for every authorization, with the account's email, email_verified
//                     and groups
//   resource_scope    the scopes that resource knows (default "openid profile email groups
//                     offline_access"), which may appear in its access tokens' scope
//   access_token_ttl  seconds (default 300); id_token_ttl (3600); refresh_token_ttl (14 days)
//   key_dir           folder of the signing keys, <kid>.json (private JWKs), made when missing;
//                     without it the keys live in memory only
//   signing_keys      kids (default ["k1"]): the first signs, all are in the JWKS
//   verbose           oidc-provider's own notices and every back-channel delivery to stderr
//
// Sign-in uses the development interactions (a form at /interaction/:uid); a login that is not
// a key of accounts is refused with a 400 page. Consent is given on the account's behalf for
// whatever a client asks (no consent page unless the client sends prompt=consent). Sessions,
// grants and tokens are held in memory, so they end with the process. Back-channel logouts may
// reach loopback receivers. Stops on SIGTERM, SIGINT, or when its parent process goes away.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';


const STANDARD_CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: [
    'name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username',
    'profile', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at',
  ],
  groups: ['groups'],
};

function fail(message) {
  process.stderr.write(`oidc provider: ${message}\n`);
  process.exit(1);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    return fail(`the configuration on stdin is not JSON: ${err.message}`);
  }
}

// Private JWKs for the given kids: read from keyDir, or made (RSA 2048) and saved there.
function signingKeys(keyDir, kids) {
  if (keyDir) mkdirSync(keyDir, { recursive: true });
  return kids.map((kid) => {
    const path = keyDir && join(keyDir, `${kid}.json`);
    let jwk;
    if (path && existsSync(path)) {
      jwk = JSON.parse(readFileSync(path, 'utf8'));
    } else {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      jwk = privateKey.export({ format: 'jwk' });
    }
    jwk = { ...jwk, kid, alg: 'RS256', use: 'sig' };
    if (path && !existsSync(path)) writeFileSync(path, JSON.stringify(jwk), { mode: 0o600 });
    return jwk;
  });
}

function htmlEscape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const config = await readStdin();
const verbose = !!config.verbose;
const accounts = config.accounts ?? {};
const resource = config.resource;
const resourceScope = config.resource_scope ?? 'openid profile email groups offline_access';
const accessTokenTtl = config.access_token_ttl ?? 300;
const known = (sub) => typeof sub === 'string' && Object.hasOwn(accounts, sub);

// oidc-provider prints its notices with console.info (stdout) and console.warn: keep stdout for
// the ready line, and these quiet unless asked.
console.log = console.info = console.debug = verbose ? console.error : () => {};
if (!verbose) console.warn = () => {};
// Loaded after that: it warns about the Node.js version as it loads.
const { default: Provider, errors, interactionPolicy } = await import('oidc-provider');

let app;
const server = createServer((req, res) => app(req, res));
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(config.port ?? 0, '127.0.0.1', resolve);
}).catch((err) => fail(`cannot listen on 127.0.0.1:${config.port ?? 0}: ${err.message}`));
const issuer = `http://127.0.0.1:${server.address().port}`;

// Every prompt as usual, except native clients need no consent page of their own.
const policy = interactionPolicy.base();
policy.get('consent').checks.remove('native_client_prompt');

const provider = new Provider(issuer, {
  clients: config.clients ?? [],
  jwks: { keys: signingKeys(config.key_dir, config.signing_keys ?? ['k1']) },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: STANDARD_CLAIMS,
  scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
  // Claims the scopes allow go in the ID token too, not only to userinfo.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  interactions: { policy },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    backchannelLogout: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: !!resource,
      defaultResource: async () => resource,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: resourceScope,
          audience: resource,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  async findAccount(ctx, sub) {
    if (!known(sub)) return undefined;
    return { accountId: sub, claims: async () => ({ ...accounts[sub], sub }) };
  },
  // The account's email and groups in JWT access tokens.
  async extraTokenClaims(ctx, token) {
    if (token.kind !== 'AccessToken' || !known(token.accountId)) return undefined;
    // As Keycloak's access tokens carry them with the email scope: the address and whether it is verified.
    const { email, email_verified, groups } = accounts[token.accountId];
    return {
      ...(email === undefined ? {} : { email }),
      ...(email_verified === undefined ? {} : { email_verified }),
      ...(groups === undefined ? {} : { groups }),
    };
  },
  // Consent on the account's behalf: the grant covers whatever this request asks for.
  async loadExistingGrant(ctx) {
    const { oidc } = ctx;
    const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
    let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    grant ??= new oidc.provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId });
    const scopes = [...oidc.requestParamOIDCScopes];
    if (scopes.length) grant.addOIDCScope(scopes.join(' '));
    const claims = [...oidc.requestParamClaims];
    if (claims.length) grant.addOIDCClaims(claims);
    for (const [indicator, server] of Object.entries(oidc.resourceServers ?? {})) {
      const granted = [...oidc.requestParamScopes].filter((scope) => server.scopes.has(scope));
      if (granted.length) grant.addResourceScope(indicator, granted.join(' '));
    }
    await grant.save();
    return grant;
  },
  // A refresh token for every client allowed the refresh_token grant, offline_access or not.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  // Back-channel logouts go to loopback receivers too (oidc-provider refuses special-use
  // addresses through its own dispatcher).
  fetch: (url, options) => {
    delete options.dispatcher;
    return globalThis.fetch(url, options);
  },
  ttl: {
    AccessToken: accessTokenTtl,
    ClientCredentials: accessTokenTtl,
    IdToken: config.id_token_ttl ?? 3600,
    RefreshToken: config.refresh_token_ttl ?? 14 * 24 * 3600,
    AuthorizationCode: 60,
    Interaction: 3600,
    Session: 14 * 24 * 3600,
    Grant: 14 * 24 * 3600,
    DeviceCode: 600,
    BackchannelAuthenticationRequest: 600,
    PreAuthorizedCode: 600,
  },
  clientBasedCORS: () => true,
});

// A sign-in as an account that does not exist stops at the provider with a 400 page (checked
// as the authorization resumes after the sign-in form).
provider.use(async (ctx, next) => {
  const resume = ctx.method === 'GET' && /^\/auth\/([^/]+)$/.exec(ctx.path);
  if (resume) {
    const interaction = await provider.Interaction.find(resume[1]);
    const login = interaction?.result?.login?.accountId;
    if (login !== undefined && !known(login)) {
      await interaction.destroy();
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = `<!DOCTYPE html><html><head><title>Sign-in failed</title></head><body>`
        + `<h1>Sign-in failed</h1><p>unknown account: ${htmlEscape(login)}</p></body></html>`;
      return;
    }
  }
  await next();
});

provider.on('server_error', (ctx, err) => process.stderr.write(`oidc provider: server error: ${err.stack}\n`));
provider.on('backchannel.error', (ctx, err, client) => {
  process.stderr.write(`oidc provider: back-channel logout to ${client.clientId} failed: ${err.message}\n`);
});
if (verbose) {
  provider.on('backchannel.success', (ctx, client, sub, sid) => {
    process.stderr.write(`oidc provider: back-channel logout sent to ${client.clientId} (sub ${sub}, sid ${sid})\n`);
  });
}

app = provider.callback();

function stop() {
  server.close();
  server.closeAllConnections();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
