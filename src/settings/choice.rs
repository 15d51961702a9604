//! Settings whose value is one of a few names ([`Choice`]): each such type says once its setting's name, its
//! values' names (the first the canonical one, then accepted aliases) and its parse error, and every front end
//! (the CLI's flags, the service's query and JSON, Python's keywords) parses and prints it through the same
//! `FromStr` and `Display`.

/// A setting whose value is one of a few names, parsed case-insensitively, printed by its canonical name.
///
/// ```
/// use framefeed::{Choice, DType, Layout};
/// assert_eq!("float32".parse::<DType>(), Ok(DType::F32));
/// assert_eq!("f32".parse::<DType>(), Ok(DType::F32)); // an alias
/// assert_eq!(DType::F32.to_string(), "float32");
/// assert_eq!(Layout::NAMES, ["FHWC", "FCHW", "CFHW"]);
/// let err = "fhcw".parse::<Layout>().unwrap_err();
/// assert_eq!(err, "layout is 'fhcw'; allowed: 'FHWC', 'FCHW', 'CFHW'");
/// ```
pub trait Choice: Sized + Copy + 'static {
    /// The setting's name, as the front ends spell it (`dtype`, `layout`...).
    const SETTING: &'static str;
    /// The canonical name of every value, in order.
    const NAMES: &'static [&'static str];
    /// This value's canonical name.
    fn name(self) -> &'static str;
    /// The value of a name or alias (ASCII case-insensitive), if any.
    fn from_name(name: &str) -> Option<Self>;
    /// The value of `name`, or a message naming the setting and its allowed values.
    fn parse_choice(name: &str) -> Result<Self, String> {
        Self::from_name(name.trim()).ok_or_else(|| {
            let allowed: Vec<String> = Self::NAMES.iter().map(|n| format!("'{n}'")).collect();
            format!(
                "{} is '{name}'; allowed: {}",
                Self::SETTING,
                allowed.join(", ")
            )
        })
    }
}

/// Implements [`Choice`], `FromStr` (the error a message, as [`Choice::parse_choice`] gives) and `Display`
/// (the canonical name) for a unit-variant enum: `choices!(Type, "setting", [Type::A => "a" | "alias", ...])`.
macro_rules! choices {
    ($ty:ty, $setting:literal, [$($variant:path => $name:literal $(| $alias:literal)*),+ $(,)?]) => {
        impl $crate::settings::choice::Choice for $ty {
            const SETTING: &'static str = $setting;
            const NAMES: &'static [&'static str] = &[$($name),+];

            fn name(self) -> &'static str {
                match self {
                    $($variant => $name,)+
                }
            }

            fn from_name(name: &str) -> Option<Self> {
                $(
                    if name.eq_ignore_ascii_case($name) $(|| name.eq_ignore_ascii_case($alias))* {
                        return Some($variant);
                    }
                )+
                None
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                <Self as $crate::settings::choice::Choice>::parse_choice(s)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::settings::choice::Choice::name(*self))
            }
        }
    };
}
pub(crate) use choices;

#[cfg(test)]
mod tests {
    use super::Choice;
    use crate::settings::config::{LastSequencePolicy, NvdecDriver, Threading};
    use crate::settings::transforms::{DType, Interpolation, Layout, ResizeMode};
    use crate::settings::url::RtspTransport;

    /// Every value round-trips through its canonical name, in any case; names are unique.
    fn round_trips<T: Choice + PartialEq + std::fmt::Debug + std::fmt::Display>() {
        let mut seen = std::collections::BTreeSet::new();
        for name in T::NAMES {
            let value = T::parse_choice(name).unwrap();
            assert_eq!(value.name(), *name);
            assert_eq!(value.to_string(), *name);
            assert_eq!(T::parse_choice(&name.to_ascii_uppercase()), Ok(value));
            assert!(seen.insert(name.to_ascii_lowercase()), "{name} twice");
        }
        let err = T::parse_choice("no-such-value").unwrap_err();
        assert!(err.starts_with(&format!("{} is 'no-such-value'; allowed: ", T::SETTING)));
        assert!(
            T::NAMES.iter().all(|n| err.contains(&format!("'{n}'"))),
            "{err}"
        );
    }

    #[test]
    fn every_choice_round_trips_and_names_its_values() {
        round_trips::<LastSequencePolicy>();
        round_trips::<Threading>();
        round_trips::<NvdecDriver>();
        round_trips::<DType>();
        round_trips::<Layout>();
        round_trips::<Interpolation>();
        round_trips::<ResizeMode>();
        round_trips::<RtspTransport>();
    }

    #[test]
    fn the_clis_old_spellings_are_aliases() {
        assert_eq!("u8".parse(), Ok(DType::U8));
        assert_eq!("f16-unit".parse(), Ok(DType::F16Unit));
        assert_eq!("fchw".parse(), Ok(Layout::Fchw));
    }
}
