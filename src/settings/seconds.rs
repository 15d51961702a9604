//! Durations given in seconds, as every front end takes them (the CLI's flags, the service's JSON and query,
//! Python's keywords): one rule for what a number of seconds is, and one message when it is not. Each setting's
//! own range (at least 100 ms, at most an hour...) is its config's `validate`.

use std::time::Duration;

/// `value` seconds of the setting `setting` as a [`Duration`]: a finite number, at least 0, or the message
/// `"{setting} is {value}; allowed: a number of seconds, at least 0"`.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(framefeed::seconds_setting("read_timeout", 2.5), Ok(Duration::from_millis(2500)));
/// assert_eq!(
///     framefeed::seconds_setting("read_timeout", -1.0).unwrap_err(),
///     "read_timeout is -1; allowed: a number of seconds, at least 0"
/// );
/// assert!(framefeed::seconds_setting("read_timeout", f64::NAN).is_err());
/// ```
pub fn seconds_setting(setting: &str, value: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("{setting} is {value}; allowed: a number of seconds, at least 0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_finite_non_negative_number_is_its_duration(s in 0.0f64..1e9) {
            let d = seconds_setting("x", s).unwrap();
            prop_assert!((d.as_secs_f64() - s).abs() <= s * 1e-12 + 1e-9);
        }

        #[test]
        fn a_negative_number_names_the_setting(s in -1e9f64..-1e-9) {
            prop_assert!(seconds_setting("stall_timeout", s).unwrap_err().starts_with("stall_timeout is -"));
        }
    }

    #[test]
    fn not_a_number_and_infinity_are_refused() {
        for s in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30] {
            assert!(seconds_setting("x", s).is_err(), "{s}");
        }
    }
}
