//! The `# mask-json NAME...` request option: values that are truly dynamic
//! in a JSON answer (the time a server stored an upload, say) are replaced
//! by `*` in both bodies before they are compared, so that the rest of the
//! document is still compared byte for byte. Only string values of members
//! with exactly these names are masked (`"NAME":"…"` as PHP's `json_encode`
//! writes them, or with blanks after the colon as a pretty printer does);
//! everything else is untouched.

/// `body` with the string value of every member named in `names` masked.
pub fn mask(body: &[u8], names: &[String]) -> Vec<u8> {
    let mut out = body.to_vec();
    for name in names {
        out = mask_one(&out, name);
    }
    out
}

fn mask_one(body: &[u8], name: &str) -> Vec<u8> {
    let key = format!("\"{name}\":");
    let key = key.as_bytes();
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(key) {
            // The key, the blanks a pretty printer puts after the colon.
            let mut j = i + key.len();
            while body.get(j) == Some(&b' ') {
                j += 1;
            }
            if body.get(j) != Some(&b'"') {
                out.extend_from_slice(&body[i..j]);
                i = j;
                continue;
            }
            out.extend_from_slice(&body[i..=j]);
            j += 1;
            // the value ends at the first quote not escaped by a backslash
            while j < body.len() && body[j] != b'"' {
                j += if body[j] == b'\\' { 2 } else { 1 };
            }
            out.push(b'*');
            i = j.min(body.len());
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn masks_named_string_members_only() {
        let names = vec!["date".to_string(), "modified".to_string()];
        let body =
            br#"{"id":5,"date":"2026-11-21T08:37:53","date_gmt":"x","modified":"a\"b","n":"date"}"#;
        assert_eq!(
            mask(body, &names),
            br#"{"id":5,"date":"*","date_gmt":"x","modified":"*","n":"date"}"#.to_vec()
        );
    }

    #[test]
    fn pretty_printed_members_are_masked_too() {
        let names = vec!["renew-at".to_string()];
        assert_eq!(
            mask(b"{\n  \"renew-at\": \"Sun\",\n  \"renew-at\": 5\n}", &names),
            b"{\n  \"renew-at\": \"*\",\n  \"renew-at\": 5\n}".to_vec()
        );
    }

    #[test]
    fn unterminated_value_is_masked_to_the_end() {
        let names = vec!["date".to_string()];
        assert_eq!(mask(br#"{"date":"20"#, &names), br#"{"date":"*"#.to_vec());
        assert_eq!(mask(br#"{"date":"2\"#, &names), br#"{"date":"*"#.to_vec());
    }
}
