//! The rules of a magic file: read as Apache's `parse` reads a line, and
//! matched as its `match`, `mget`, `mcheck` and `mprint` do, C's integer
//! widths and signs included.

use super::Found;

/// The size of the value a rule copies (`union VALUETYPE`).
const VALUE_SIZE: usize = 64;
/// Longest string value (`MAXstring` less its terminator).
const MAX_STRING: usize = 63;
/// Longest description kept (`MAXDESC` less its terminator).
const MAX_DESC: usize = 49;
/// Longest printed piece (`MAXMIMESTRING` less its terminator).
const MAX_PRINTED: usize = 255;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    Byte,
    Short,
    Long,
    Str,
    Date,
    BeShort,
    BeLong,
    BeDate,
    LeShort,
    LeLong,
    LeDate,
    /// A type word Apache refused: the rule stays in the list (it was
    /// added before its type was read) and never matches.
    Invalid,
}

/// One line of the magic file.
#[derive(Clone, Debug)]
pub struct Rule {
    level: u32,
    /// `(offset.type±n)`: the indirection's type and addend.
    indirect: Option<(Type, i64)>,
    offset: i64,
    unsigned: bool,
    kind: Type,
    mask: u64,
    relation: u8,
    /// A number's value, or a string's bytes.
    number: u64,
    string: Vec<u8>,
    no_space: bool,
    desc: Vec<u8>,
}

/// The rules of a magic file, and the errors Apache logs reading it.
pub(super) fn parse_file(text: &[u8]) -> (Vec<Rule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for raw in text.split(|&b| b == b'\n') {
        let line = trim_end(raw);
        let start = line
            .iter()
            .position(|&b| !is_space(b))
            .unwrap_or(line.len());
        let line = &line[start..];
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        parse_line(line, &mut rules, &mut errors);
    }
    (rules, errors)
}

fn trim_end(mut b: &[u8]) -> &[u8] {
    while let [rest @ .., last] = b {
        if !is_space(*last) {
            break;
        }
        b = rest;
    }
    b
}

/// C's `isspace` in the "C" locale.
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C's `strtol(s, &end, 0)`: the value and the bytes read (0 when none).
fn strtol(s: &[u8]) -> (i64, usize) {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let negative = matches!(s.get(i), Some(b'-'));
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let (radix, digits_at) = match (s.get(i), s.get(i + 1)) {
        (Some(b'0'), Some(b'x' | b'X')) if s.get(i + 2).is_some_and(u8::is_ascii_hexdigit) => {
            (16, i + 2)
        }
        (Some(b'0'), _) => (8, i),
        _ => (10, i),
    };
    let mut j = digits_at;
    let mut value: i128 = 0;
    while let Some(d) = s.get(j).and_then(|&c| (c as char).to_digit(radix)) {
        value = (value * radix as i128 + d as i128).min(i64::MAX as i128 + 1);
        j += 1;
    }
    if j == digits_at {
        return (0, 0);
    }
    let value = if negative { -value } else { value };
    (value.clamp(i64::MIN as i128, i64::MAX as i128) as i64, j)
}

/// `signextend`: a value compared as signed takes the sign of its width.
fn sign_extend(kind: Type, unsigned: bool, v: u64) -> u64 {
    if unsigned {
        return v;
    }
    match kind {
        Type::Byte => v as u8 as i8 as i64 as u64,
        Type::Short | Type::BeShort | Type::LeShort => v as u16 as i16 as i64 as u64,
        _ => v,
    }
}

const TYPES: &[(&str, Type)] = &[
    ("byte", Type::Byte),
    ("short", Type::Short),
    ("long", Type::Long),
    ("string", Type::Str),
    ("date", Type::Date),
    ("beshort", Type::BeShort),
    ("belong", Type::BeLong),
    ("bedate", Type::BeDate),
    ("leshort", Type::LeShort),
    ("lelong", Type::LeLong),
    ("ledate", Type::LeDate),
];

/// One rule (`parse`). A line Apache refuses half-way stays a rule that
/// never matches, as in Apache's list.
fn parse_line(mut l: &[u8], rules: &mut Vec<Rule>, errors: &mut Vec<String>) {
    let text = String::from_utf8_lossy(l).into_owned();
    let mut rule = Rule {
        level: 0,
        indirect: None,
        offset: 0,
        unsigned: false,
        kind: Type::Invalid,
        mask: u64::MAX,
        relation: b'=',
        number: 0,
        string: Vec::new(),
        no_space: false,
        desc: Vec::new(),
    };
    while let [b'>', rest @ ..] = l {
        rule.level += 1;
        l = rest;
    }
    let indirect = rule.level != 0 && l.first() == Some(&b'(');
    if indirect {
        l = &l[1..];
    }
    let (offset, used) = strtol(l);
    if used == 0 {
        errors.push(format!(
            "AH01521: offset {} invalid",
            String::from_utf8_lossy(l)
        ));
    }
    rule.offset = offset;
    l = &l[used..];
    if indirect {
        let mut in_type = Type::Long;
        if l.first() == Some(&b'.') {
            in_type = match l.get(1) {
                Some(b'l') => Type::Long,
                Some(b's') => Type::Short,
                Some(b'b') => Type::Byte,
                other => {
                    errors.push(format!(
                        "AH01522: indirect offset type {} invalid",
                        other.map_or(String::new(), |c| (*c as char).to_string())
                    ));
                    Type::Long
                }
            };
            l = &l[2.min(l.len())..];
        }
        let negative = l.first() == Some(&b'-');
        let signed = matches!(l.first(), Some(b'+' | b'-'));
        let after_sign = &l[usize::from(signed)..];
        let mut addend = 0;
        let mut rest = l;
        if after_sign.first().is_some_and(u8::is_ascii_digit) {
            let (v, n) = strtol(after_sign);
            addend = if negative { -v } else { v };
            rest = &after_sign[n..];
        } else if signed {
            rest = after_sign;
        }
        if rest.first() != Some(&b')') {
            errors.push("AH01523: missing ')' in indirect offset".into());
        }
        l = rest.get(1..).unwrap_or_default();
        rule.indirect = Some((in_type, addend));
    }
    while l.first().is_some_and(u8::is_ascii_digit) {
        l = &l[1..];
    }
    l = eat_space(l);
    if l.first() == Some(&b'u') {
        rule.unsigned = true;
        l = &l[1..];
    }
    let Some(&(word, kind)) = TYPES.iter().find(|(w, _)| l.starts_with(w.as_bytes())) else {
        errors.push(format!(
            "AH01524: type {} invalid",
            String::from_utf8_lossy(l)
        ));
        rules.push(rule);
        return;
    };
    rule.kind = kind;
    l = &l[word.len()..];
    if l.first() == Some(&b'&') {
        let (v, n) = strtol(&l[1..]);
        rule.mask = sign_extend(kind, rule.unsigned, v as u64);
        l = &l[1 + n..];
    }
    l = eat_space(l);
    match l.first() {
        Some(&c @ (b'>' | b'<' | b'&' | b'^' | b'=')) => {
            rule.relation = c;
            l = &l[1..];
        }
        Some(b'!') if kind != Type::Str => {
            rule.relation = b'!';
            l = &l[1..];
        }
        Some(b'x') if l.get(1).copied().is_some_and(is_space) => {
            rule.relation = b'x';
            l = &l[1..];
        }
        _ => {}
    }
    if rule.relation != b'x' {
        l = eat_space(l);
        if kind == Type::Str {
            let (value, rest) = c_string(l, &text, errors);
            rule.string = value;
            l = rest;
        } else {
            let (v, n) = strtol(l);
            rule.number = sign_extend(kind, rule.unsigned, v as u64);
            l = &l[n..];
        }
    }
    l = eat_space(l);
    if l.first() == Some(&0x08) {
        l = &l[1..];
        rule.no_space = true;
    } else if l.starts_with(b"\\b") {
        l = &l[2..];
        rule.no_space = true;
    }
    rule.desc = l[..l.len().min(MAX_DESC)].to_vec();
    rules.push(rule);
}

fn eat_space(mut l: &[u8]) -> &[u8] {
    while l.first().copied().is_some_and(is_space) {
        l = &l[1..];
    }
    l
}

/// `getstr`: a value with C escapes, up to an unescaped blank.
fn c_string<'l>(mut s: &'l [u8], line: &str, errors: &mut Vec<String>) -> (Vec<u8>, &'l [u8]) {
    let mut out = Vec::new();
    while let Some((&c, rest)) = s.split_first() {
        if is_space(c) {
            s = rest;
            break;
        }
        s = rest;
        if out.len() >= MAX_STRING {
            errors.push(format!("AH01526: string too long: {line}"));
            break;
        }
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some((&e, rest)) = s.split_first() else {
            break;
        };
        s = rest;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b't' => out.push(b'\t'),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match s.first() {
                        Some(&d @ b'0'..=b'7') => {
                            v = (v << 3) | u32::from(d - b'0');
                            s = &s[1..];
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v: u32 = u32::from(b'x');
                let mut digits = 0;
                while digits < 3 {
                    match s.first().and_then(|&d| (d as char).to_digit(16)) {
                        Some(d) => {
                            v = if digits == 0 { d } else { (v << 4) + d };
                            s = &s[1..];
                            digits += 1;
                        }
                        None => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    (out, s)
}

/// `softmagic`/`match`: the first rule that matches, with the
/// continuations under it.
pub(super) fn matches(buf: &[u8], rules: &[Rule], found: &mut Found) -> bool {
    let mut i = 0;
    while i < rules.len() {
        let m = &rules[i];
        let value = get(buf, m);
        if !value.as_ref().is_some_and(|v| check(v, m)) {
            // Skip this rule's continuations.
            i += 1;
            while i < rules.len() && rules[i].level != 0 {
                i += 1;
            }
            continue;
        }
        let value = value.expect("matched");
        found.pieces.push(print(&value, m));
        let mut need_separator = !m.desc.is_empty();
        let mut level = 1;
        i += 1;
        while i < rules.len() && rules[i].level != 0 {
            let c = &rules[i];
            if level >= c.level {
                level = level.min(c.level);
                if let Some(v) = get(buf, c).filter(|v| check(v, c)) {
                    if need_separator && !c.no_space && !c.desc.is_empty() {
                        found.pieces.push(b" ".to_vec());
                        need_separator = false;
                    }
                    found.pieces.push(print(&v, c));
                    if !c.desc.is_empty() {
                        need_separator = true;
                    }
                    level += 1;
                }
            }
            i += 1;
        }
        return true;
    }
    false
}

/// `mget` and `mconvert`: the 64 bytes a rule compares, converted to its
/// type in place (as the C union holds them).
fn get(buf: &[u8], m: &Rule) -> Option<[u8; VALUE_SIZE]> {
    let mut p = read_at(buf, m.offset)?;
    convert(&mut p, m.kind)?;
    if let Some((in_type, addend)) = m.indirect {
        let base = match in_type {
            Type::Byte => i64::from(p[0]),
            Type::Short => i64::from(u16::from_le_bytes([p[0], p[1]])),
            _ => i64::from_le_bytes(p[..8].try_into().expect("8 bytes")),
        };
        p = read_at(buf, base.wrapping_add(addend))?;
        convert(&mut p, m.kind)?;
    }
    Some(p)
}

fn read_at(buf: &[u8], offset: i64) -> Option<[u8; VALUE_SIZE]> {
    let start = usize::try_from(offset).ok()?;
    let bytes = buf.get(start..start.checked_add(VALUE_SIZE)?)?;
    Some(bytes.try_into().expect("VALUE_SIZE bytes"))
}

fn convert(p: &mut [u8; VALUE_SIZE], kind: Type) -> Option<()> {
    let be32 = |p: &[u8; VALUE_SIZE]| i32::from_be_bytes([p[0], p[1], p[2], p[3]]);
    let le32 = |p: &[u8; VALUE_SIZE]| i32::from_le_bytes([p[0], p[1], p[2], p[3]]);
    match kind {
        Type::Byte | Type::Short | Type::Long | Type::Date => {}
        Type::Str => {
            p[VALUE_SIZE - 1] = 0;
            let end = p.iter().position(|&b| b == 0).unwrap_or(VALUE_SIZE);
            if let Some(nl) = p[..end].iter().position(|&b| b == b'\n') {
                p[nl] = 0;
            }
        }
        Type::BeShort => {
            let v = u16::from_be_bytes([p[0], p[1]]);
            p[..2].copy_from_slice(&v.to_le_bytes());
        }
        Type::LeShort => {}
        Type::BeLong | Type::BeDate => {
            let v = i64::from(be32(p));
            p[..8].copy_from_slice(&v.to_le_bytes());
        }
        Type::LeLong | Type::LeDate => {
            let v = i64::from(le32(p));
            p[..8].copy_from_slice(&v.to_le_bytes());
        }
        Type::Invalid => return None,
    }
    Some(())
}

/// The number a rule compares (before its sign and mask).
fn number(p: &[u8; VALUE_SIZE], kind: Type) -> u64 {
    match kind {
        Type::Byte => u64::from(p[0]),
        Type::Short | Type::BeShort | Type::LeShort => u64::from(u16::from_le_bytes([p[0], p[1]])),
        _ => u64::from_le_bytes(p[..8].try_into().expect("8 bytes")),
    }
}

/// `mcheck`.
fn check(p: &[u8; VALUE_SIZE], m: &Rule) -> bool {
    // A value whose text is "x" (for a number, whose first two bytes in
    // memory are 'x' and 0) always matches.
    let boink = if m.kind == Type::Str {
        m.string == b"x"
    } else {
        m.number & 0xffff == u64::from(b'x')
    };
    if boink {
        return true;
    }
    let (v, l) = if m.kind == Type::Str {
        let mut v: u64 = 0;
        for (i, &a) in m.string.iter().enumerate() {
            v = (i64::from(p[i]) - i64::from(a)) as u64;
            if v != 0 {
                break;
            }
        }
        (v, 0)
    } else {
        (number(p, m.kind), m.number)
    };
    let v = sign_extend(m.kind, m.unsigned, v) & m.mask;
    match m.relation {
        b'x' => true,
        b'!' => v != l,
        b'=' => v == l,
        b'>' if m.unsigned => v > l,
        b'>' => (v as i64) > (l as i64),
        b'<' if m.unsigned => v < l,
        b'<' => (v as i64) < (l as i64),
        b'&' => v & l == l,
        b'^' => v & l != l,
        _ => false,
    }
}

/// `mprint`: the description, as a `printf` format, with the value.
fn print(p: &[u8; VALUE_SIZE], m: &Rule) -> Vec<u8> {
    let arg = match m.kind {
        Type::Str if m.relation == b'=' => Arg::Text(m.string.clone()),
        Type::Str => {
            let end = p.iter().position(|&b| b == 0).unwrap_or(VALUE_SIZE);
            Arg::Text(p[..end].to_vec())
        }
        Type::Date | Type::BeDate | Type::LeDate => {
            Arg::Text(ctime(i64::from_le_bytes(p[..8].try_into().expect("8 bytes"))).into_bytes())
        }
        _ => Arg::Number(sign_extend(m.kind, m.unsigned, number(p, m.kind)) & m.mask),
    };
    let mut out = format(&m.desc, &arg);
    out.truncate(MAX_PRINTED);
    out
}

enum Arg {
    Text(Vec<u8>),
    Number(u64),
}

/// The conversions of `printf` a description may hold: `%%`, `%s`, and
/// the integer ones (`d i u x X o c`, with `l` and `h` modifiers).
fn format(desc: &[u8], arg: &Arg) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut used = false;
    while i < desc.len() {
        let c = desc[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        while matches!(desc.get(i), Some(b'l' | b'h')) {
            i += 1;
        }
        let Some(&conv) = desc.get(i) else {
            break;
        };
        i += 1;
        if conv == b'%' {
            out.push(b'%');
            continue;
        }
        if used {
            continue;
        }
        used = true;
        match (conv, arg) {
            (b's', Arg::Text(t)) => out.extend_from_slice(t),
            (b'd' | b'i', Arg::Number(n)) => out.extend((*n as i64).to_string().bytes()),
            (b'u', Arg::Number(n)) => out.extend(n.to_string().bytes()),
            (b'x', Arg::Number(n)) => out.extend(format!("{n:x}").bytes()),
            (b'X', Arg::Number(n)) => out.extend(format!("{n:X}").bytes()),
            (b'o', Arg::Number(n)) => out.extend(format!("{n:o}").bytes()),
            (b'c', Arg::Number(n)) => out.push(*n as u8),
            _ => {}
        }
    }
    out
}

/// `apr_ctime`: `Thu Jan 01 00:00:00 1970` in local time (UTC here).
fn ctime(secs: i64) -> String {
    let http = crate::http::date::fmt_http_date(secs);
    // "Thu, 01 Jan 1970 00:00:00 GMT" → "Thu Jan 01 00:00:00 1970".
    let parts: Vec<&str> = http.split([' ', ',']).filter(|s| !s.is_empty()).collect();
    match parts.as_slice() {
        [wday, day, mon, year, time, ..] => format!("{wday} {mon} {day} {time} {year}"),
        _ => http,
    }
}
