//! `private_key_jwt` (RFC 7523): the client proves who it is with a JWT it signs,
//! for the client credentials grant (ES256, see `jwt`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

/// How long an assertion is good for.
const LIFETIME_SECS: u64 = 300;

/// A signed assertion that `client_id` is asking `audience` (the authorization
/// server's issuer) for a token.
pub(crate) fn client_assertion(
    client_id: &str,
    audience: &str,
    private_key_pem: &str,
) -> Result<String, String> {
    let der = pem_body(private_key_pem)?;
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
        .map_err(|_| "the private key is not a PKCS#8 P-256 key (ES256)".to_owned())?;
    let now = super::jwt::now();
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + LIFETIME_SECS, "jti": super::jwt::unique_id()?,
    });
    super::jwt::signed(&key, &header, &claims)
}

/// The DER bytes of a PEM block.
fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("-----") && !line.is_empty())
        .collect();
    STANDARD
        .decode(body)
        .map_err(|_| "the private key is not PEM".to_owned())
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    #[test]
    fn an_assertion_is_signed_and_verifies() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(pkcs8.as_ref())
        );
        let jwt = client_assertion("me", "https://as.example/", &pem).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("me"), Some("me"))
        );
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            ring::signature::KeyPair::public_key(&key).as_ref(),
        );
        let signed = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(parts[2]).unwrap(),
            )
            .unwrap();
        assert!(client_assertion("me", "a", "not a key").is_err());
    }
}
