//! Signed JWTs (ES256, with ring, the crypto library prise already has for TLS), for
//! the assertions and proofs prise makes itself.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::EcdsaKeyPair;
use serde_json::Value;

/// `header.claims.signature`, signed with `key`.
pub(crate) fn signed(key: &EcdsaKeyPair, header: &Value, claims: &Value) -> Result<String, String> {
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key
        .sign(&SystemRandom::new(), signing_input.as_bytes())
        .map_err(|_| "signing a JWT failed".to_owned())?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature.as_ref())
    ))
}

/// A fresh unique id (`jti`): 128 random bits.
pub(crate) fn unique_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "no randomness".to_owned())?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}
