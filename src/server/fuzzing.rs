//! The service's parsers for the `service_request` fuzz target (feature `fuzzing`): strict HTTP framing over
//! any bytes cut anywhere, the query string of `POST /videos`, and the tokens file.

use std::sync::{Arc, OnceLock};

use super::config::ServeConfig;
use super::service::Service;

/// Runs `bytes` through one of the parsers (the first byte picks which) and checks what must hold for any
/// input.
pub fn request_bytes(bytes: &[u8]) {
    let Some((&pick, rest)) = bytes.split_first() else {
        return;
    };
    match pick % 3 {
        0 => framing(rest),
        1 => query(rest),
        _ => {
            let _ = super::auth::Tokens::parse(&String::from_utf8_lossy(rest));
        }
    }
}

/// The framing record is the same whether the bytes arrive at once or cut in two anywhere.
fn framing(bytes: &[u8]) {
    let Some((&cut, bytes)) = bytes.split_first() else {
        return;
    };
    let mut whole = super::strict::Tracker::default();
    whole.feed(bytes);
    let cut = usize::from(cut).min(bytes.len());
    let mut split = super::strict::Tracker::default();
    split.feed(&bytes[..cut]);
    split.feed(&bytes[cut..]);
    assert_eq!(format!("{whole:?}"), format!("{split:?}"));
}

/// A query string either becomes a valid configuration that fits the upload budget, or a refusal.
fn query(bytes: &[u8]) {
    static SERVICE: OnceLock<Arc<Service>> = OnceLock::new();
    let service = SERVICE.get_or_init(|| Service::new(ServeConfig::default()));
    let text = String::from_utf8_lossy(bytes);
    // As the `Params` extractor reads it: the serde request type, then the cross-field rules.
    let Ok(params) = super::requests::parse_query::<super::requests::UploadParams>(&text) else {
        return;
    };
    let Ok(parsed) = super::upload::upload_query(params) else {
        return;
    };
    if let Ok((config, _)) = super::operator::operator_config(&parsed.settings, service) {
        config
            .validate()
            .expect("an accepted query gives a valid configuration");
    }
}
