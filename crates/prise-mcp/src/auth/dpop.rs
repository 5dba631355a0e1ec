//! DPoP (RFC 9449, the MCP `auth/dpop` extension): tokens bound to a key of prise's.
//! Each token request and each request to the server carries a fresh proof, a JWT
//! signed with that key over the method and URL (and the token's hash), so a token
//! copied elsewhere is worthless. The key is made at sign-in and kept beside the
//! tokens; a server that wants a nonce in the proofs (`use_dpop_nonce`) gets the one
//! it last named.
//!
//! prise uses DPoP when the server asks for it (its challenge's scheme is `DPoP`) and
//! its authorization server signs ES256 proofs (`dpop_signing_alg_values_supported`).

use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use rmcp::transport::auth::{
    AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use serde_json::json;

/// A proof key: P-256, ES256.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    /// The public key, as a proof's header carries it.
    jwk: serde_json::Value,
    /// The last nonce a server asked for, per origin.
    nonces: Mutex<Vec<(String, String)>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("jwk", &self.jwk)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new key.
    pub fn generate() -> Result<DpopKey, String> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| "cannot make a DPoP key".to_owned())?;
        DpopKey::from_pkcs8(pkcs8.as_ref())
    }

    /// The key kept as text (base64 of its PKCS#8 form).
    pub fn from_text(text: &str) -> Result<DpopKey, String> {
        let der = STANDARD
            .decode(text.trim())
            .map_err(|_| "the DPoP key on record is damaged".to_owned())?;
        DpopKey::from_pkcs8(&der)
    }

    /// The key as text, to keep.
    pub fn to_text(&self) -> String {
        STANDARD.encode(&self.pkcs8)
    }

    fn from_pkcs8(der: &[u8]) -> Result<DpopKey, String> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|_| "the DPoP key on record is not a P-256 key".to_owned())?;
        // An uncompressed point: 0x04, then x and y.
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(DpopKey {
            pair,
            pkcs8: der.to_vec(),
            jwk,
            nonces: Mutex::new(Vec::new()),
        })
    }

    /// A proof for a `method` request to `url`, presenting `access_token` if any,
    /// with the nonce last asked for at that origin.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, String> {
        let target = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        // RFC 9449 §4.2: the URI without its query and fragment.
        let htu = format!("{}{}", target.origin().ascii_serialization(), target.path());
        let mut claims = json!({
            "jti": super::jwt::unique_id()?,
            "htm": method,
            "htu": htu,
            "iat": super::jwt::now(),
        });
        if let Some(token) = access_token {
            let hash = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(hash.as_ref()));
        }
        if let Some(nonce) = self.nonce(&target) {
            claims["nonce"] = json!(nonce);
        }
        let header = json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk });
        super::jwt::signed(&self.pair, &header, &claims)
    }

    fn nonce(&self, url: &reqwest::Url) -> Option<String> {
        let origin = url.origin().ascii_serialization();
        let nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces
            .iter()
            .find(|(o, _)| *o == origin)
            .map(|(_, n)| n.clone())
    }

    /// Remembers the nonce the server at `url` asked for.
    pub fn set_nonce(&self, url: &str, nonce: &str) {
        let Ok(url) = reqwest::Url::parse(url) else {
            return;
        };
        let origin = url.origin().ascii_serialization();
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.retain(|(o, _)| *o != origin);
        nonces.push((origin, nonce.to_owned()));
    }
}

/// Whether a sign-in after `challenge` uses DPoP (see the module's doc).
pub(crate) fn wanted(challenge: Option<&str>, metadata: &AuthorizationMetadata) -> bool {
    let asked = challenge.is_some_and(|c| crate::net::Challenge(c).is("dpop"));
    let signs = metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(|v| v.as_array())
        .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
    asked && signs
}

/// The HTTP client of rmcp's OAuth machinery, with a DPoP proof on each token
/// request (a POST with a `grant_type`), made again once with the nonce the
/// authorization server asks for (RFC 9449 §8).
pub(crate) struct ProvingClient {
    follow: reqwest::Client,
    stop: reqwest::Client,
    key: Arc<DpopKey>,
}

impl ProvingClient {
    pub fn new(key: Arc<DpopKey>) -> Result<ProvingClient, String> {
        Ok(ProvingClient {
            follow: crate::net::for_sign_in().map_err(|e| e.to_string())?,
            stop: crate::net::not_following().map_err(|e| e.to_string())?,
            key,
        })
    }
}

impl OAuthHttpClient for ProvingClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Follow => &self.follow,
                _ => &self.stop,
            };
            let timeout = request.timeout;
            let (parts, body) = request.request.into_parts();
            let url = parts.uri.to_string();
            let token_request = parts.method == reqwest::Method::POST
                && String::from_utf8_lossy(&body).contains("grant_type=");
            let mut nonce_asked = false;
            loop {
                let mut builder = client
                    .request(parts.method.clone(), &url)
                    .headers(parts.headers.clone())
                    .body(body.clone());
                if let Some(timeout) = timeout {
                    builder = builder.timeout(timeout);
                }
                if token_request {
                    builder = builder.header("dpop", self.key.proof("POST", &url, None)?);
                }
                let response = builder.send().await?;
                let status = response.status();
                let headers = response.headers().clone();
                let bytes = crate::net::read_limited(response, crate::net::SIGN_IN_ANSWER)
                    .await
                    .map_err(|e| format!("{url}: {e}"))?;
                let nonce = headers.get("dpop-nonce").and_then(|v| v.to_str().ok());
                let asks = token_request
                    && status == reqwest::StatusCode::BAD_REQUEST
                    && serde_json::from_slice::<serde_json::Value>(&bytes)
                        .is_ok_and(|answer| answer["error"] == "use_dpop_nonce");
                if let (true, false, Some(nonce)) = (asks, nonce_asked, nonce) {
                    self.key.set_nonce(&url, nonce);
                    nonce_asked = true;
                    continue;
                }
                let mut answer = oauth2::http::Response::builder().status(status);
                for (name, value) in &headers {
                    answer = answer.header(name, value);
                }
                return Ok(answer.body(bytes)?);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jwt: &str, index: usize) -> serde_json::Value {
        let part = jwt.split('.').nth(index).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_names_the_request_and_verifies_with_its_own_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_text(&key.to_text()).unwrap();
        assert_eq!(key.jwk, again.jwk, "the key survives being kept");
        key.set_nonce("https://mcp.example/other", "n-1");
        let proof = key
            .proof("POST", "https://mcp.example/mcp?x=1#f", Some("token"))
            .unwrap();
        let (header, claims) = (part(&proof, 0), part(&proof, 1));
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        let hash = ring::digest::digest(&ring::digest::SHA256, b"token");
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(hash.as_ref()));
        let second = key
            .proof("POST", "https://mcp.example/mcp", Some("token"))
            .unwrap();
        assert_ne!(
            claims["jti"],
            part(&second, 1)["jti"],
            "each proof is fresh"
        );
        // The signature verifies with the public key the header carries.
        let coordinate = |c: &str| {
            URL_SAFE_NO_PAD
                .decode(header["jwk"][c].as_str().unwrap())
                .unwrap()
        };
        let mut point = vec![4u8];
        point.extend(coordinate("x"));
        point.extend(coordinate("y"));
        let (signed, signature) = proof.rsplit_once('.').unwrap();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point)
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(signature).unwrap(),
            )
            .unwrap();
    }
}
