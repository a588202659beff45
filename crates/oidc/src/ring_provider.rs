//! The signatures of `jsonwebtoken`, verified with ring (the crypto of the workspace's TLS), so
//! that no second crypto library is built. Verification only: MGDS signs no JWT. Shared
//! secrets (HS*) are refused: a provider's tokens are checked with its published public keys.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature as sig;

static PROVIDER: CryptoProvider =
    CryptoProvider { signer_factory: no_signer, verifier_factory: verifier, key_utils: KeyUtils::new_unimplemented() };

/// Makes ring `jsonwebtoken`'s crypto in this process (once; later calls change nothing).
pub(crate) fn install() {
    let _ = PROVIDER.install_default();
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::InvalidAlgorithm.into())
}

/// A public key and the ring algorithm that checks signatures made with it.
struct Verifier {
    algorithm: Algorithm,
    key: Key,
}

enum Key {
    Rsa { n: Vec<u8>, e: Vec<u8>, params: &'static sig::RsaParameters },
    Other { bytes: Vec<u8>, params: &'static dyn sig::VerificationAlgorithm },
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    let family = match algorithm {
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => AlgorithmFamily::Rsa,
        Algorithm::ES256 | Algorithm::ES384 => AlgorithmFamily::Ec,
        Algorithm::EdDSA => AlgorithmFamily::Ed,
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    if key.family() != family {
        return Err(ErrorKind::InvalidAlgorithm.into());
    }
    let rsa: Option<&'static sig::RsaParameters> = match algorithm {
        Algorithm::RS256 => Some(&sig::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Some(&sig::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Some(&sig::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Some(&sig::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Some(&sig::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Some(&sig::RSA_PSS_2048_8192_SHA512),
        _ => None,
    };
    let key = match (rsa, key.kind()) {
        (Some(params), DecodingKeyKind::RsaModulusExponent { n, e }) => Key::Rsa { n: n.clone(), e: e.clone(), params },
        (Some(params), DecodingKeyKind::SecretOrDer(der)) => Key::Other { bytes: der.clone(), params },
        (None, DecodingKeyKind::SecretOrDer(bytes)) => {
            let params: &'static dyn sig::VerificationAlgorithm = match algorithm {
                Algorithm::ES256 => &sig::ECDSA_P256_SHA256_FIXED,
                Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED,
                _ => &sig::ED25519,
            };
            Key::Other { bytes: bytes.clone(), params }
        }
        _ => return Err(ErrorKind::InvalidKeyFormat.into()),
    };
    Ok(Box::new(Verifier { algorithm: *algorithm, key }))
}

impl signature::Verifier<Vec<u8>> for Verifier {
    fn verify(&self, msg: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        let checked = match &self.key {
            Key::Rsa { n, e, params } => sig::RsaPublicKeyComponents { n, e }.verify(params, msg, signature),
            Key::Other { bytes, params } => sig::UnparsedPublicKey::new(*params, bytes).verify(msg, signature),
        };
        checked.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for Verifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}
