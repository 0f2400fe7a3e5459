//! The `# mask-values` request option: a body of `Key: value` lines whose
//! values are the server's own (mod_status's `?auto` page: uptime, counters,
//! load, the scoreboard) is compared by its keys and their order only. Each
//! line holding a colon becomes `Key: *`; other lines (the server's name on
//! the first) stay as they are. Keys named in the option are dropped from
//! both bodies: lines a server prints only sometimes (Apache's `CPULoad`
//! appears only once its CPU clock has ticked).

/// `body` with the value of every `Key: value` line replaced by `*`, and
/// the lines whose key is in `drop` removed.
pub fn mask(body: &[u8], drop: &[String]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    for line in body.split_inclusive(|&b| b == b'\n') {
        let (text, end): (&[u8], &[u8]) = match line.strip_suffix(b"\n") {
            Some(t) => (t, b"\n"),
            None => (line, b""),
        };
        match text.iter().position(|&b| b == b':') {
            Some(colon) if drop.iter().any(|k| k.as_bytes() == &text[..colon]) => continue,
            Some(colon) => {
                out.extend_from_slice(&text[..colon]);
                out.extend_from_slice(b": *");
            }
            None => out.extend_from_slice(text),
        }
        out.extend_from_slice(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::mask;

    #[test]
    fn keys_and_order_stay_values_go() {
        assert_eq!(
            mask(
                b"localhost\nTotal Accesses: 12\nServerUptime:\nCPULoad: 1\nScoreboard: _W_\n",
                &["CPULoad".to_string()]
            ),
            b"localhost\nTotal Accesses: *\nServerUptime: *\nScoreboard: *\n".to_vec()
        );
    }
}
