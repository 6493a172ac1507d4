//! The rule for company short names. A company name is a path segment of every token-service URL
//! (`/oauth/<company>/...`) and the `company` claim of every token, so it is checked in one place: the
//! verifier refuses a token naming anything else before it builds a URL from it, and `speechd bootstrap`
//! refuses to create such a company.

/// The longest company short name.
pub const MAX_COMPANY_LEN: usize = 64;

/// Whether `name` can be a company short name: 1 to [`MAX_COMPANY_LEN`] characters of `a-z`, `0-9`, `-`
/// and `_`.
pub fn valid_company(name: &str) -> bool {
    (1..=MAX_COMPANY_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lowercase_names_are_companies() {
        for name in [
            "acme",
            "a",
            "acme-2",
            "big_co",
            &"x".repeat(MAX_COMPANY_LEN),
        ] {
            assert!(valid_company(name), "{name:?}");
        }
    }

    #[test]
    fn paths_spaces_capitals_and_long_names_are_not() {
        let long = "x".repeat(MAX_COMPANY_LEN + 1);
        for name in [
            "", "../x", "a b", "ACME", "acme/x", "acme?x", "acmé", "a.b", &long,
        ] {
            assert!(!valid_company(name), "{name:?}");
        }
    }
}
