//! Options users choose by name (`opa`, `local-window`, ...), read into the engine's enums by
//! serde. The engine names the choices; the front names the option the user wrote.

use serde::de::DeserializeOwned;

/// `text` as one of the names of `T`, or a one-line reason listing them: "unknown value 'x',
/// expected `opa` or `dm`".
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|e| {
        e.to_string().replacen(&format!("unknown variant `{text}`"), &format!("unknown value '{text}'"), 1)
    })
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::experiments::dopa_fig6::Fig6Kind;
    use crate::fixed_priority::dopa::{DmKey, LocalTest};
    use crate::synthesis::priorities::Method;

    #[test]
    fn names_in_and_reasons_out() {
        assert_eq!(parse::<Method>("dm"), Ok(Method::Dm));
        assert_eq!(parse::<DmKey>("end-to-end"), Ok(DmKey::EndToEnd));
        assert_eq!(parse::<DmKey>("absolute"), Ok(DmKey::AbsoluteDeadline));
        assert_eq!(parse::<LocalTest>("release-jitter"), Ok(LocalTest::ReleaseJitter));
        assert_eq!(parse::<Fig6Kind>("applications"), Ok(Fig6Kind::Applications));
        assert_eq!(parse::<Method>("rm").unwrap_err(), "unknown value 'rm', expected `opa` or `dm`");
        assert_eq!(
            parse::<DmKey>("x").unwrap_err(),
            "unknown value 'x', expected one of `local-window`, `end-to-end`, `absolute`"
        );
    }
}
