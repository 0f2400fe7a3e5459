//! The PROXY protocol header at the start of a connection, read the way
//! mod_remoteip's input filter reads it, so that the same bytes are
//! accepted, the same are refused and the same are left for HTTP (or TLS).
//!
//! Apache's reads, which this reproduces step by step ([`HeaderReader`]):
//! the first 15 bytes decide the version (v2's 12-byte signature with
//! version nibble 2, else `PROXY ` for v1, else the connection is closed
//! without a word). A v1 header is then read a line at a time, up to 108
//! bytes in all, until the first CR is followed by LF (so a line ending in
//! a bare LF makes the next line part of the header); `PROXY UNKNOWN\r\n`,
//! exactly 15 bytes, therefore takes the request line with it and fails as
//! Apache's does ("have data left over"). A v2 header is read to its
//! length field, then to its length (address and TLVs, at most 216 bytes;
//! the TLVs are skipped). Nothing after the header is ever read here.
//!
//! What the header says: v1 `TCP4`/`TCP6` and v2 `PROXY` over TCP name the
//! client; v1 `UNKNOWN` and v2 `LOCAL` leave the connection's own peer;
//! AF_UNIX, UDP and unspecified families under `PROXY` are refused
//! (`AH10183`), as Apache refuses them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The bytes read before the version is decided.
const MIN_HDR_LEN: usize = 15;
/// A v1 header's limit, CRLF included (Apache's `proxy_v1` buffer).
const V1_MAX: usize = 108;
/// A v2 header's fixed part.
const V2_FIXED: usize = 16;
/// A v2 header's limit: the fixed part and 216 bytes of address and TLVs.
const V2_MAX: usize = V2_FIXED + 216;
const V2_SIGNATURE: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";
/// What one line read returns at most when no LF comes (the core's
/// `HUGE_STRING_LEN`).
pub const LINE_READ_MAX: usize = 8192;

/// How the next bytes are to be read from the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// What is there, at least one byte and at most this many.
    Bytes(usize),
    /// One line: up to and including its LF, or [`LINE_READ_MAX`] bytes
    /// when none comes. Never more, so nothing after the header is taken.
    Line,
}

/// One error-log line of mod_remoteip's, connection-level (the client is
/// the connection's peer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    pub level: &'static str,
    pub message: String,
}

/// Where the reading stands after some bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    More(Read),
    /// A valid header: the client it names. Apache's debug line
    /// (`AH03511`) comes with it.
    Done(SocketAddr, LogLine),
    /// Not a valid header: the connection is closed, nothing is sent.
    /// The lines Apache writes (none for a connection that does not
    /// begin with a header signature).
    Failed(Vec<LogLine>),
}

/// The header read so far.
#[derive(Debug)]
pub struct HeaderReader {
    peer: SocketAddr,
    buf: Vec<u8>,
    need: usize,
    version: u8,
}

fn error(message: String) -> Progress {
    Progress::Failed(vec![LogLine {
        level: "error",
        message,
    }])
}

impl HeaderReader {
    /// A reader for a connection from `peer` (the client `UNKNOWN` and
    /// `LOCAL` leave in place).
    pub fn new(peer: SocketAddr) -> HeaderReader {
        HeaderReader {
            peer,
            buf: Vec::with_capacity(V2_MAX),
            need: MIN_HDR_LEN,
            version: 0,
        }
    }

    /// How to read next.
    pub fn next_read(&self) -> Read {
        if self.version == 1 {
            Read::Line
        } else {
            Read::Bytes(self.need - self.buf.len())
        }
    }

    /// What the connection said before it ended or ran out of time
    /// (`ended`: end of input; else the time limit): Apache's lines.
    pub fn interrupted(&self, ended: bool) -> Vec<LogLine> {
        if ended {
            vec![LogLine {
                level: "info",
                message: "(70014)End of file found: AH10634: RemoteIPProxyProtocol: connection closed before a complete header was received".into(),
            }]
        } else {
            vec![LogLine {
                level: "error",
                message: "(70007)The timeout specified has expired: AH10184: failed reading input"
                    .into(),
            }]
        }
    }

    /// Take what one read returned (as [`HeaderReader::next_read`] asked;
    /// not empty).
    pub fn feed(&mut self, bytes: &[u8]) -> Progress {
        let want = match self.next_read() {
            Read::Bytes(n) => n,
            Read::Line => self.need - self.buf.len(),
        };
        if bytes.len() > want {
            return error(format!(
                "AH10185: RemoteIPProxyProtocol header too long, got {} expected {want}",
                bytes.len()
            ));
        }
        self.buf.extend_from_slice(bytes);
        match self.version {
            0 => {
                if self.buf.len() >= MIN_HDR_LEN {
                    if self.buf[..12] == V2_SIGNATURE[..] && self.buf[12] & 0xf0 == 0x20 {
                        self.version = 2;
                        self.need = V2_FIXED;
                    } else if self.buf.starts_with(b"PROXY ") {
                        self.version = 1;
                        self.need = V1_MAX;
                    } else {
                        return Progress::Failed(Vec::new());
                    }
                }
                Progress::More(self.next_read())
            }
            1 => match v1(&self.buf, self.peer) {
                V1::NeedMore => Progress::More(self.next_read()),
                V1::Error(message) => error(message),
                V1::Done(client, len) => {
                    self.need = len;
                    self.finish(client)
                }
            },
            _ => {
                if self.buf.len() >= V2_FIXED {
                    self.need =
                        V2_FIXED + usize::from(u16::from_be_bytes([self.buf[14], self.buf[15]]));
                    if self.need > V2_MAX {
                        return error(
                            "AH10186: RemoteIPProxyProtocol protocol header length too long".into(),
                        );
                    }
                }
                if self.buf.len() < self.need {
                    return Progress::More(self.next_read());
                }
                match v2(&self.buf, self.peer) {
                    Ok(client) => self.finish(client),
                    Err(message) => error(message),
                }
            }
        }
    }

    fn finish(&self, client: SocketAddr) -> Progress {
        let valid = LogLine {
            level: "debug",
            message: format!(
                "AH03511: RemoteIPProxyProtocol: received valid PROXY header: {}:{}",
                client.ip(),
                client.port()
            ),
        };
        if self.buf.len() > self.need {
            return Progress::Failed(vec![
                valid,
                LogLine {
                    level: "error",
                    message: format!(
                        "AH03513: RemoteIPProxyProtocol: internal error: have data left over;  need={}, rcvd={}, brigade-empty=1",
                        self.need,
                        self.buf.len()
                    ),
                },
            ]);
        }
        Progress::Done(client, valid)
    }
}

enum V1 {
    NeedMore,
    Error(String),
    /// The client and the header's length, CRLF included.
    Done(SocketAddr, usize),
}

/// `PROXY {TCP4|TCP6|UNKNOWN} client dest client-port dest-port\r\n`,
/// parsed as mod_remoteip parses it: words split on spaces, the
/// destination port never looked at, the client port read as `%hu`.
fn v1(buf: &[u8], peer: SocketAddr) -> V1 {
    let Some(cr) = buf[..buf.len() - 1].iter().position(|&b| b == b'\r') else {
        return V1::NeedMore;
    };
    if buf[cr + 1] != b'\n' {
        return V1::NeedMore;
    }
    // The line is a C string: it ends at a NUL too.
    let line = &buf[..cr];
    let line = &line[..line.iter().position(|&b| b == 0).unwrap_or(line.len())];
    let text = String::from_utf8_lossy(line);
    let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty()).skip(1);
    let mut next = |field: &str| {
        words.next().ok_or_else(|| {
            format!("AH03497: RemoteIPProxyProtocol: no {field} found in header '{text}'")
        })
    };
    let parsed = (|| {
        let family = next("family")?;
        let v6 = match family {
            b"UNKNOWN" => return Ok(peer),
            b"TCP4" => false,
            b"TCP6" => true,
            _ => {
                return Err(format!(
                    "AH03499: RemoteIPProxyProtocol: unknown family '{}' in header '{text}'",
                    String::from_utf8_lossy(family)
                ))
            }
        };
        let host = next("client-address")?;
        let valid = |b: &u8| {
            b.is_ascii_digit() || *b == b'.' || v6 && (b.is_ascii_hexdigit() || *b == b':')
        };
        let host = String::from_utf8_lossy(host).into_owned();
        if !host.bytes().all(|b| valid(&b)) {
            return Err(format!(
                "AH03500: RemoteIPProxyProtocol: invalid client-address '{host}' found in header '{text}'"
            ));
        }
        next("destination-address")?;
        let port_word = next("client-port")?;
        let Some(port) = scan_u16(port_word) else {
            return Err(format!(
                "AH03501: RemoteIPProxyProtocol: error parsing port '{}' in header '{text}'",
                String::from_utf8_lossy(port_word)
            ));
        };
        let ip = if v6 {
            host.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
        } else {
            inet_aton(&host).map(IpAddr::V4)
        };
        match ip {
            Some(ip) => Ok(SocketAddr::new(unmapped(ip), port)),
            None => Err(format!(
                "(EAI 2)Name or service not known: AH03502: RemoteIPProxyProtocol: error converting family '{}', host '{host}', and port '{port}' to sockaddr; header was '{text}'",
                if v6 { 10 } else { 2 }
            )),
        }
    })();
    match parsed {
        Ok(client) => V1::Done(client, cr + 2),
        Err(message) => V1::Error(message),
    }
}

/// The binary header: `PROXY` over TCP names the client, `LOCAL` keeps
/// the connection's peer.
fn v2(buf: &[u8], peer: SocketAddr) -> Result<SocketAddr, String> {
    let ver_cmd = buf[12];
    let family = buf[13];
    let len = usize::from(u16::from_be_bytes([buf[14], buf[15]]));
    let addr = &buf[V2_FIXED..];
    match ver_cmd & 0x0f {
        0x00 => Ok(peer),
        0x01 => match family {
            0x11 => {
                if len < 12 {
                    return Err(format!(
                        "AH10597: RemoteIPProxyProtocol: address length {len} too short for TCPv4"
                    ));
                }
                let ip = Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3]);
                Ok(SocketAddr::new(
                    IpAddr::V4(ip),
                    u16::from_be_bytes([addr[8], addr[9]]),
                ))
            }
            0x21 => {
                if len < 36 {
                    return Err(format!(
                        "AH10598: RemoteIPProxyProtocol: address length {len} too short for TCPv6"
                    ));
                }
                let mut octets = [0u8; 16];
                octets.copy_from_slice(&addr[..16]);
                Ok(SocketAddr::new(
                    unmapped(IpAddr::V6(Ipv6Addr::from(octets))),
                    u16::from_be_bytes([addr[32], addr[33]]),
                ))
            }
            _ => Err(format!(
                "AH10183: RemoteIPProxyProtocol: unsupported protocol {family:02x}"
            )),
        },
        _ => Err(format!(
            "AH03507: RemoteIPProxyProtocol: unsupported command {ver_cmd:02x}"
        )),
    }
}

/// An IPv4-mapped IPv6 address is written as the IPv4 address it is
/// (APR's `apr_sockaddr_ip_get`).
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// `sscanf(word, "%hu")`: optional sign, decimal digits (at least one),
/// anything after them ignored; the value as `strtoul` gives it (a minus
/// negates, overflow is the largest value), cut to 16 bits.
fn scan_u16(word: &[u8]) -> Option<u16> {
    let word = word
        .iter()
        .position(|b| !b" \t\n\x0b\x0c\r".contains(b))
        .map_or(&word[..0], |i| &word[i..]);
    let (negative, digits) = match word.first() {
        Some(b'-') => (true, &word[1..]),
        Some(b'+') => (false, &word[1..]),
        _ => (false, word),
    };
    let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if count == 0 {
        return None;
    }
    let mut value: u64 = 0;
    for &d in &digits[..count] {
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) => v,
            None => return Some(u16::MAX),
        };
    }
    if negative {
        value = value.wrapping_neg();
    }
    Some(value as u16)
}

/// glibc's `inet_aton` (what `getaddrinfo` tries first for an IPv4
/// literal): one to four parts, each decimal or, with a leading 0, octal;
/// the last part fills the bytes left.
fn inet_aton(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::with_capacity(4);
    for part in &parts {
        if part.is_empty() {
            return None;
        }
        let value = if part.len() > 1 && part.starts_with('0') {
            u32::from_str_radix(&part[1..], 8).ok()?
        } else {
            part.parse::<u32>().ok()?
        };
        values.push(value);
    }
    let (last, leading) = values.split_last()?;
    if leading.iter().any(|&v| v > 0xff) {
        return None;
    }
    let last_bits = 32 - 8 * leading.len() as u32;
    if last_bits < 32 && *last >= 1 << last_bits {
        return None;
    }
    let mut addr = *last;
    for (i, &v) in leading.iter().enumerate() {
        addr |= v << (24 - 8 * i as u32);
    }
    Some(Ipv4Addr::from(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: &str = "127.0.0.1:40000";

    /// Feed `input` as a connection that sent all of it at once would give
    /// it, read the way the reader asks.
    fn read_all(input: &[u8]) -> (Progress, usize) {
        let mut r = HeaderReader::new(PEER.parse().unwrap());
        let mut pos = 0;
        loop {
            let take = match r.next_read() {
                Read::Bytes(n) => n.min(input.len() - pos),
                Read::Line => input[pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(input.len() - pos, |i| i + 1)
                    .min(LINE_READ_MAX),
            };
            if take == 0 {
                return (Progress::More(r.next_read()), pos);
            }
            let p = r.feed(&input[pos..pos + take]);
            pos += take;
            if !matches!(p, Progress::More(_)) {
                return (p, pos);
            }
        }
    }

    fn client(input: &[u8]) -> (SocketAddr, usize) {
        match read_all(input) {
            (Progress::Done(c, _), used) => (c, used),
            other => panic!("{other:?}"),
        }
    }

    fn failure(input: &[u8]) -> Vec<String> {
        match read_all(input).0 {
            Progress::Failed(lines) => lines.into_iter().map(|l| l.message).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn v1_names_the_client_and_leaves_the_request() {
        let input = b"PROXY TCP4 1.2.3.4 5.6.7.8 1111 80\r\nGET / HTTP/1.0\r\n\r\n";
        assert_eq!(client(input), ("1.2.3.4:1111".parse().unwrap(), 36));
        let v6 = b"PROXY TCP6 2001:DB8::A ::1 1111 80\r\nGET /";
        assert_eq!(client(v6).0, "[2001:db8::a]:1111".parse().unwrap());
        // No destination port; a port as sscanf reads it.
        assert_eq!(
            client(b"PROXY TCP4 1.2.3.4 5.6.7.8 -1\r\n").0,
            "1.2.3.4:65535".parse().unwrap()
        );
        assert_eq!(
            client(b"PROXY TCP4 1.2.3.4 5.6.7.8 70000x 2\r\n").0,
            "1.2.3.4:4464".parse().unwrap()
        );
        // inet_aton's forms: octal, fewer parts.
        assert_eq!(
            client(b"PROXY TCP4 010.1.2 5.6.7.8 1 2\r\n").0,
            "8.1.0.2:1".parse().unwrap()
        );
        assert_eq!(
            client(b"PROXY UNKNOWN whatever\r\nGET").0,
            PEER.parse().unwrap()
        );
    }

    #[test]
    fn v1_refusals_say_what_apache_says() {
        assert_eq!(
            failure(b"PROXY TCP4  1.2.3.4   5.6.7.8\r\nGET"),
            ["AH03497: RemoteIPProxyProtocol: no client-port found in header 'PROXY TCP4  1.2.3.4   5.6.7.8'"]
        );
        assert_eq!(
            failure(b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n"),
            ["AH03499: RemoteIPProxyProtocol: unknown family 'TCP5' in header 'PROXY TCP5 1.2.3.4 5.6.7.8 1 2'"]
        );
        assert_eq!(
            failure(b"PROXY TCP4 1.2.3.x 5.6.7.8 1 2\r\n"),
            ["AH03500: RemoteIPProxyProtocol: invalid client-address '1.2.3.x' found in header 'PROXY TCP4 1.2.3.x 5.6.7.8 1 2'"]
        );
        assert_eq!(
            failure(b"PROXY TCP4 1.2.3.4 5.6.7.8 x 2\r\n"),
            ["AH03501: RemoteIPProxyProtocol: error parsing port 'x' in header 'PROXY TCP4 1.2.3.4 5.6.7.8 x 2'"]
        );
        assert_eq!(
            failure(b"PROXY TCP4 1.2.3.400 5.6.7.8 1 2\r\n"),
            ["(EAI 2)Name or service not known: AH03502: RemoteIPProxyProtocol: error converting family '2', host '1.2.3.400', and port '1' to sockaddr; header was 'PROXY TCP4 1.2.3.400 5.6.7.8 1 2'"]
        );
        let long = [&b"PROXY TCP4 1.2.3.4 "[..], &[b'5'; 90], b" 1 2\r\n"].concat();
        assert_eq!(
            failure(&long),
            ["AH10185: RemoteIPProxyProtocol header too long, got 100 expected 93"]
        );
        // Exactly 15 bytes: the request line is read with it.
        assert_eq!(
            failure(b"PROXY UNKNOWN\r\nGET / HTTP/1.0\r\n"),
            [
                "AH03511: RemoteIPProxyProtocol: received valid PROXY header: 127.0.0.1:40000",
                "AH03513: RemoteIPProxyProtocol: internal error: have data left over;  need=15, rcvd=31, brigade-empty=1"
            ]
        );
        // Not a header at all: closed without a line.
        assert!(failure(b"GET / HTTP/1.0\r\n\r\n").is_empty());
    }

    #[test]
    fn v1_bare_lf_takes_the_next_line() {
        let input = b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\nGET / HTTP/1.0\r\n\r\n";
        assert_eq!(client(input), ("1.2.3.4:1".parse().unwrap(), 47));
    }

    fn v2_header(ver_cmd: u8, family: u8, body: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.push(ver_cmd);
        h.push(family);
        h.extend_from_slice(&(body.len() as u16).to_be_bytes());
        h.extend_from_slice(body);
        h
    }

    #[test]
    fn v2_tcp_with_tlvs_skipped() {
        let mut body = vec![1, 2, 3, 4, 5, 6, 7, 8, 0, 80, 0, 81];
        body.extend_from_slice(b"\x03\x00\x04abcd\x04\x00\x02xy");
        let mut input = v2_header(0x21, 0x11, &body);
        let len = input.len();
        input.extend_from_slice(b"GET / HTTP/1.0\r\n\r\n");
        assert_eq!(client(&input), ("1.2.3.4:80".parse().unwrap(), len));
        let mut v6 = vec![0x20, 0x01, 0x0d, 0xb8];
        v6.extend_from_slice(&[0; 11]);
        v6.push(1);
        v6.extend_from_slice(&[0; 16]);
        v6.extend_from_slice(&[0x30, 0x39, 0, 80]);
        assert_eq!(
            client(&v2_header(0x21, 0x21, &v6)).0,
            "[2001:db8::1]:12345".parse().unwrap()
        );
        let mut mapped = vec![0; 10];
        mapped.extend_from_slice(&[0xff, 0xff, 9, 8, 7, 6]);
        mapped.extend_from_slice(&[0; 16]);
        mapped.extend_from_slice(&[0x30, 0x39, 0, 80]);
        assert_eq!(
            client(&v2_header(0x21, 0x21, &mapped)).0,
            "9.8.7.6:12345".parse().unwrap()
        );
        // LOCAL, whatever the family: the connection's own peer.
        assert_eq!(client(&v2_header(0x20, 0x00, b"")).0, PEER.parse().unwrap());
        assert_eq!(
            client(&v2_header(0x20, 0x11, &[1; 12])).0,
            PEER.parse().unwrap()
        );
    }

    #[test]
    fn v2_refusals() {
        assert_eq!(
            failure(&v2_header(0x21, 0x31, &[b'a'; 216])),
            ["AH10183: RemoteIPProxyProtocol: unsupported protocol 31"]
        );
        assert_eq!(
            failure(&v2_header(0x21, 0x12, &[1; 12])),
            ["AH10183: RemoteIPProxyProtocol: unsupported protocol 12"]
        );
        assert_eq!(
            failure(&v2_header(0x22, 0x11, &[1; 12])),
            ["AH03507: RemoteIPProxyProtocol: unsupported command 22"]
        );
        assert_eq!(
            failure(&v2_header(0x21, 0x11, &[b'a'; 217])),
            ["AH10186: RemoteIPProxyProtocol protocol header length too long"]
        );
        assert_eq!(
            failure(&v2_header(0x21, 0x11, &[9; 4])),
            ["AH10597: RemoteIPProxyProtocol: address length 4 too short for TCPv4"]
        );
        assert_eq!(
            failure(&v2_header(0x21, 0x21, &[1; 12])),
            ["AH10598: RemoteIPProxyProtocol: address length 12 too short for TCPv6"]
        );
        // Version 1 in the binary form is neither.
        assert!(failure(&v2_header(0x11, 0x00, b"GET / HTTP/1.0\r\n")).is_empty());
    }

    #[test]
    fn inet_aton_forms() {
        assert_eq!(inet_aton("1.2.3.4"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(inet_aton("127.1"), Some(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(inet_aton("010.0.0.1"), Some(Ipv4Addr::new(8, 0, 0, 1)));
        assert_eq!(inet_aton("16909060"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        for bad in ["1.2.3.400", "1..2", "1.2.3.4.", "08.1.1.1", "1.2.3.4.5", ""] {
            assert_eq!(inet_aton(bad), None, "{bad}");
        }
    }
}
