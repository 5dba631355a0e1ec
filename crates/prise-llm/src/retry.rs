//! When to try a model request again, and how long to wait.

use std::time::Duration;

/// Exponential backoff with jitter, honouring `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first wait.
    pub first: Duration,
    /// No wait is longer.
    pub cap: Duration,
    /// Tries in all, the first included.
    pub max_tries: u32,
}

impl Default for RetryPolicy {
    /// 1 s, doubling, at most 30 s, five tries.
    fn default() -> Self {
        RetryPolicy {
            first: Duration::from_secs(1),
            cap: Duration::from_secs(30),
            max_tries: 5,
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try `attempt` (from 1): the server's `Retry-After` when it
    /// gave one (within the cap), otherwise the backoff with jitter between half and
    /// all of it, so that many clients do not retry in step.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.cap);
        }
        let full = self
            .first
            .saturating_mul(1 << attempt.saturating_sub(1).min(16))
            .min(self.cap);
        let jitter = jitter_fraction();
        full.mul_f64(0.5 + 0.5 * jitter)
    }
}

/// Whether an HTTP status is worth another try: rate limits, overload, server errors.
/// Any other 4xx means the request itself is wrong and would fail again.
pub(crate) fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// A number in [0, 1) that differs from call to call; no RNG dependency needed for jitter.
fn jitter_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Spread the low bits over the range (a multiplicative hash).
    f64::from(nanos.wrapping_mul(2_654_435_761) >> 8) / f64::from(1u32 << 24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_honours_retry_after() {
        let policy = RetryPolicy::default();
        for attempt in 1..=6 {
            let full = Duration::from_secs(1 << (attempt - 1)).min(Duration::from_secs(30));
            let delay = policy.delay(attempt, None);
            assert!(delay >= full / 2 && delay <= full, "{attempt}: {delay:?}");
        }
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(700))),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn what_is_retried() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(retryable(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!retryable(status), "{status}");
        }
    }
}
