//! `apache2`'s command line on htaccel, compared with Debian's apache2
//! itself where it can answer: the same configuration and flags given to
//! both, their output compared (`-t` errors in included files, `-S`, `-t
//! -D DUMP_VHOSTS`, `-M`, `-d`/`-f`/`-C`/`-c`, `${VAR}` from the
//! environment as Debian's envvars set them). `-k` needs a running server
//! Apache's tests cannot share, so it is checked against what
//! `apache2 -k` is documented to do (signal the process `PidFile` names).

mod common;

use common::TempDir;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const APACHE: &str = "/usr/sbin/apache2";

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e} (the oracle is Debian's apache2 package)"))
}

fn htaccel(args: &[&str], env: &[(&str, &str)]) -> Output {
    run(env!("CARGO_BIN_EXE_htaccel"), args, env)
}

/// Standard output and error together, Apache's program name replaced.
fn text(o: &Output) -> String {
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    s.replace("apache2: ", "htaccel: ")
}

/// The error of a failed `-t`, without the warnings before it (Apache's
/// carry a time stamp, htaccel's the file and line first).
fn syntax_error(o: &Output) -> String {
    let t = text(o);
    let from = t
        .lines()
        .position(|l| l.contains("Syntax error on line"))
        .unwrap_or(usize::MAX);
    t.lines().skip(from).collect::<Vec<_>>().join("\n")
}

/// A server root both servers accept: modules Apache needs to start, and
/// the `conf/mime.types` htaccel reads by default.
fn server_root(tag: &str) -> TempDir {
    let root = TempDir::new(tag);
    std::fs::create_dir_all(root.path().join("conf")).unwrap();
    std::os::unix::fs::symlink("/etc/mime.types", root.path().join("conf/mime.types")).unwrap();
    root
}

const HEAD: &str = "LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n\
                    LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n";

#[test]
fn errors_in_included_files_name_the_including_line() {
    let root = server_root("cli-include");
    let r = root.path().display().to_string();
    let head = format!("ServerRoot {r}\n{HEAD}Listen 127.0.0.1:1\n");
    root.write("missing.conf", &format!("{head}\nInclude nothere.conf\n"));
    root.write("bad-command.conf", &format!("{head}Include sub1.conf\n"));
    root.write("sub1.conf", "# c\n\nBogusDirective x\n");
    root.write("unclosed.conf", &format!("{head}Include sub2.conf\n"));
    root.write("sub2.conf", "# c\n<Directory />\n");
    root.write("deeper.conf", &format!("{head}Include sub3.conf\n"));
    root.write("sub3.conf", "\nInclude nothere.conf\n");
    for file in ["missing", "bad-command", "unclosed", "deeper"] {
        let path = format!("{r}/{file}.conf");
        let apache = run(APACHE, &["-t", "-f", &path], &[]);
        let ours = htaccel(&["-t", "-f", &path], &[]);
        assert_eq!(text(&ours), text(&apache), "{file}");
        assert_eq!(ours.status.code(), apache.status.code(), "{file}");
    }
}

/// mod_macro's errors, those of directives that run as the file is read
/// (one line, `apache2: Syntax error …`), and a few argument checks,
/// against `apache2 -t`.
#[test]
fn macro_and_read_time_errors_match_apache() {
    let root = server_root("cli-macro");
    let r = root.path().display().to_string();
    let head = format!(
        "ServerRoot {r}\n{HEAD}LoadModule macro_module /usr/lib/apache2/modules/mod_macro.so\nListen 127.0.0.1:1\n"
    );
    let cases = [
        ("no-macro", "Use Nope\n"),
        (
            "undefined",
            "<Macro M $a>\nServerAdmin $a\n</Macro>\nUse nope x\n",
        ),
        ("arity", "<Macro M $a>\nServerAdmin $a\n</Macro>\nUse M\n"),
        ("recursion", "<Macro M $a>\nUse M $a\n</Macro>\nUse M x\n"),
        ("unclosed", "<Macro M $a>\nServerAdmin $a\n"),
        ("twice", "<Macro M $a $a>\nServerAdmin $a\n</Macro>\n"),
        (
            "inside",
            "<Macro M $a $b>\nServerAdmin $a $b\n</Macro>\nUse M 1 2\n",
        ),
        (
            "undef",
            "<Macro M $a>\nServerAdmin $a\n</Macro>\nUndefMacro X\n",
        ),
        ("empty-name", "<Macro>\n</Macro>\n"),
        (
            "unbalanced",
            "<Macro M $a>\n</VirtualHost>\n</Macro>\nUse M x\n",
        ),
        ("define", "Define A B C\n"),
        ("ifdefine-empty", "<IfDefine>\n</IfDefine>\n"),
        ("ifmodule-empty", "<IfModule>\n</IfModule>\n"),
        ("listen-arity", "Listen a b c\n"),
    ];
    for (name, body) in cases {
        root.write(&format!("{name}.conf"), &format!("{head}{body}"));
        let path = format!("{r}/{name}.conf");
        let apache = run(APACHE, &["-t", "-f", &path], &[]);
        let ours = htaccel(&["-t", "-f", &path], &[]);
        assert!(
            !syntax_error(&apache).is_empty(),
            "{name}: {}",
            text(&apache)
        );
        assert_eq!(syntax_error(&ours), syntax_error(&apache), "{name}");
        assert_eq!(ours.status.code(), apache.status.code(), "{name}");
    }
}

/// Apache loads every module as it reads the file, before any other
/// directive runs: a filter named before its module's `LoadModule` is
/// known, and a server without mod_mime reads no types file. Both start
/// where `apache2 -t` says Syntax OK.
#[test]
fn modules_loaded_later_in_the_file_count_as_in_apache() {
    let root = TempDir::new("cli-load-order");
    let r = root.path().display().to_string();
    // No conf/mime.types under this ServerRoot.
    let head = format!(
        "ServerRoot {r}\n{HEAD}Listen 127.0.0.1:1\nServerName localhost\nErrorLog {r}/error.log\n"
    );
    let cases = [
        (
            "filter-first",
            "LoadModule filter_module /usr/lib/apache2/modules/mod_filter.so\n\
             AddOutputFilterByType DEFLATE text/html\n\
             LoadModule deflate_module /usr/lib/apache2/modules/mod_deflate.so\n",
        ),
        ("no-mod-mime", "DocumentRoot /tmp\n"),
    ];
    for (name, body) in cases {
        root.write(&format!("{name}.conf"), &format!("{head}{body}"));
        let path = format!("{r}/{name}.conf");
        let apache = run(APACHE, &["-t", "-f", &path], &[]);
        let ours = htaccel(&["-t", "-f", &path], &[]);
        assert!(apache.status.success(), "{name}: {}", text(&apache));
        assert!(ours.status.success(), "{name}: {}", text(&ours));
    }
}

#[test]
fn dumps_match_apache() {
    let root = server_root("cli-dump");
    let logs = TempDir::new("cli-dump-logs");
    let r = root.path().display().to_string();
    root.write(
        "sites/a.conf",
        "<VirtualHost *:18902>\nServerName a.example\nServerAlias www.a.example *.a.example\n</VirtualHost>\n\
         <VirtualHost *:18902>\nServerName b.example:80\n</VirtualHost>\n",
    );
    root.write(
        "main.conf",
        &format!(
            "{HEAD}Listen 127.0.0.1:18901\nListen 18902\nServerName main.example\n\
             DocumentRoot {r}\nErrorLog ${{APACHE_LOG_DIR}}/error.log\nPidFile run/x.pid\n\
             IncludeOptional sites/*.conf\n<VirtualHost 127.0.0.1:18901>\n</VirtualHost>\n\
             <VirtualHost 127.0.0.2:18901>\nServerName solo.example\n</VirtualHost>\n\
             <VirtualHost 127.0.0.3:18902>\nServerName three.example\n</VirtualHost>\n"
        ),
    );
    // Relative -f under -d; ${APACHE_LOG_DIR} from the environment, as
    // Debian's apache2ctl sources /etc/apache2/envvars.
    let env = [("APACHE_LOG_DIR", logs.path().to_str().unwrap())];
    for flags in [
        &["-S"][..],
        &["-t", "-D", "DUMP_VHOSTS"],
        &["-t", "-D", "DUMP_RUN_CFG"],
    ] {
        let args: Vec<&str> = ["-d", &r, "-f", "main.conf"]
            .into_iter()
            .chain(flags.iter().copied())
            .collect();
        let apache = text(&run(APACHE, &args, &env));
        let ours = text(&htaccel(&args, &env));
        // Known differences (docs/deviations.md): htaccel has no mutexes
        // and always defines HTACCEL.
        let apache: Vec<&str> = apache
            .lines()
            .filter(|l| !l.starts_with("Mutex "))
            .collect();
        let ours: Vec<&str> = ours.lines().filter(|l| *l != "Define: HTACCEL").collect();
        assert_eq!(ours, apache, "{flags:?}");
    }
    // -M: htaccel's static modules are a subset of Apache's, in its order;
    // the loaded ones are the same.
    let args = ["-d", &r, "-f", "main.conf", "-M"];
    let apache = text(&run(APACHE, &args, &env));
    let ours = text(&htaccel(&args, &env));
    let shared = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.ends_with("(shared)"))
            .map(String::from)
            .collect()
    };
    assert_eq!(shared(&ours), shared(&apache));
    // htaccel's own modules (htaccel_http3_module) are listed after Apache's.
    let own = |l: &&str| l.starts_with(" htaccel_");
    let statics: Vec<&str> = ours
        .lines()
        .filter(|l| l.ends_with("(static)") && !own(l))
        .collect();
    let apache_statics: Vec<&str> = apache.lines().filter(|l| statics.contains(l)).collect();
    assert_eq!(statics, apache_statics);
    assert!(ours.contains(" htaccel_http3_module (static)\n"), "{ours}");
    assert!(ours.starts_with("Loaded Modules:\n"), "{ours}");
}

#[test]
fn command_line_directives_come_before_and_after_the_file() {
    let root = server_root("cli-c");
    let r = root.path().display().to_string();
    root.write(
        "main.conf",
        &format!("{HEAD}Listen 127.0.0.1:18903\nDocumentRoot {r}\nErrorLog {r}/error.log\n"),
    );
    for (flag, directive) in [
        ("-C", "ServerName before.example"),
        ("-c", "NoSuchThing x"),
        ("-c", "User www-data"),
        ("-c", "Group www-data"),
    ] {
        let args = ["-d", &r, "-f", "main.conf", flag, directive, "-S"];
        let apache = text(&run(APACHE, &args, &[]));
        let ours = text(&htaccel(&args, &[]));
        let keep = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| !l.starts_with("Mutex ") && *l != "Define: HTACCEL")
                .filter(|l| !l.starts_with("PidFile"))
                .map(String::from)
                .collect()
        };
        assert_eq!(keep(&ours), keep(&apache), "{flag} {directive}");
    }
}

#[test]
fn k_signals_the_server_the_pid_file_names() {
    let site = TempDir::new("cli-k");
    site.write("index.html", "hi\n");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = site.path().display().to_string();
    site.write(
        "k.conf",
        &format!(
            "LoadModule authz_core_module x\nLoadModule mime_module x\nTypesConfig /etc/mime.types\n\
             Listen 127.0.0.1:{port}\nServerName localhost\nPidFile {s}/k.pid\nErrorLog {s}/error.log\n\
             DocumentRoot {s}\n<Directory {s}>\nRequire all granted\n</Directory>\n"
        ),
    );
    let conf = format!("{s}/k.conf");
    let k = |action: &str| htaccel(&["-f", &conf, "-k", action], &[]);
    let stopped = k("stop");
    assert_eq!(text(&stopped), "htaccel (no pid file) not running\n");
    // `start` returns once the server listens, detached from us.
    let started = k("start");
    assert!(started.status.success(), "{}", text(&started));
    let pid: i32 = std::fs::read_to_string(site.path().join("k.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stop_anyway = Guard(pid, site.path().join("k.pid"));
    assert_eq!(common::get(port, "/index.html").0, 200);
    assert_eq!(
        text(&k("start")),
        format!("htaccel (pid {pid}) already running\n")
    );
    assert!(k("graceful").status.success());
    wait_for(|| read(site.path(), "error.log").contains("AH00489:"));
    assert!(k("stop").status.success());
    wait_for(|| !site.path().join("k.pid").exists());
    assert!(read(site.path(), "error.log").contains("AH00491: caught SIGTERM"));
    drop(stop_anyway);
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

fn wait_for(mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the detached server if the test fails before stopping it (while
/// its pid file, which it removes when it stops, is there).
struct Guard(i32, std::path::PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.1.exists() {
            // SAFETY: signalling the server this test started.
            unsafe { libc::kill(self.0, libc::SIGKILL) };
        }
    }
}

/// `ErrorLog syslog:FACILITY` passes `-t` as in Apache, whatever the
/// facility (Apache checks it when it opens its logs); a facility Apache
/// does not know stops the start with Apache's words (AH10036, AH00015).
#[test]
fn syslog_error_log_facility_is_checked_at_start() {
    let root = server_root("cli-syslog");
    let r = root.path().display().to_string();
    for facility in ["local1", "bogus"] {
        root.write(
            "main.conf",
            &format!("{HEAD}Listen 127.0.0.1:18904\nErrorLog syslog:{facility}\n"),
        );
        let out = htaccel(&["-d", &r, "-f", "main.conf", "-t"], &[]);
        assert_eq!(out.status.code(), Some(0), "{facility}: {}", text(&out));
    }
    let out = htaccel(&["-d", &r, "-f", "main.conf", "-DFOREGROUND"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("AH10036: htaccel: could not open syslog error log bogus."),
        "{}",
        text(&out)
    );
}

/// A setting htaccel has only at Apache's default is refused by `-t` at
/// any other value, naming what is missing (Apache accepts both: the
/// refusal is htaccel's own answer, so the expectation is written here),
/// and accepted at the default.
#[test]
fn settings_other_than_the_default_are_refused_loudly() {
    let root = server_root("cli-default-only");
    let r = root.path().display().to_string();
    for (line, refused) in [
        ("MergeTrailers On", true),
        ("MergeTrailers Off", false),
        ("StrictHostCheck on", false),
        ("RegexDefaultOptions +ICASE", true),
        ("RegexDefaultOptions DOTALL", false),
        ("HttpProtocolOptions Unsafe", false),
        ("ServerPath /old", true),
        ("ContentDigest Off", false),
        ("ContentDigest On", true),
    ] {
        root.write(
            "main.conf",
            &format!("{HEAD}Listen 127.0.0.1:18905\n{line}\n"),
        );
        let out = htaccel(&["-d", &r, "-f", "main.conf", "-t"], &[]);
        assert_eq!(
            out.status.code(),
            Some(if refused { 1 } else { 0 }),
            "{line}: {}",
            text(&out)
        );
        if refused {
            assert!(
                text(&out).contains("not supported by htaccel yet"),
                "{line}: {}",
                text(&out)
            );
        }
    }
}

#[test]
fn dump_includes_matches_apache() {
    let root = server_root("cli-includes");
    let r = root.path().display().to_string();
    root.write(
        "main.conf",
        &format!("{HEAD}Listen 127.0.0.1:18905\nErrorLog {r}/e.log\nInclude conf.d/*.conf\n\nIncludeOptional nothere/*.conf\n"),
    );
    root.write("conf.d/a.conf", "# a\nInclude sub/x.conf\n# three\n");
    root.write("conf.d/b.conf", "# b\n");
    root.write("conf.d/c.conf", "# c\n\n\nInclude sub/x.conf\n");
    root.write("sub/x.conf", "# x\n");
    let args = ["-d", &r, "-f", "main.conf", "-t", "-D", "DUMP_INCLUDES"];
    let apache = run(APACHE, &args, &[]);
    let ours = htaccel(&args, &[]);
    // Apache's stdout only: its stderr has its AH00558 guess at a name.
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&apache.stdout)
    );
    assert!(String::from_utf8_lossy(&ours.stdout).contains("      (4) "));
}

#[test]
fn t_flag_skips_the_document_root_check_as_apache() {
    let root = server_root("cli-T");
    let r = root.path().display().to_string();
    root.write(
        "main.conf",
        &format!("{HEAD}Listen 127.0.0.1:18906\nErrorLog {r}/e.log\nDocumentRoot {r}/nothere\n"),
    );
    for extra in [&[][..], &["-T"][..]] {
        let args: Vec<&str> = ["-d", &r, "-f", "main.conf", "-t"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        // Apache refuses a missing DocumentRoot, htaccel warns
        // (docs/deviations.md); both say nothing of it under -T.
        let warned = |o: &Output| String::from_utf8_lossy(&o.stderr).contains("DocumentRoot");
        let apache = warned(&run(APACHE, &args, &[]));
        assert_eq!(warned(&htaccel(&args, &[])), apache, "{extra:?}");
        assert_eq!(apache, extra.is_empty());
    }
    let listed = String::from_utf8_lossy(&htaccel(&["-l"], &[]).stdout).into_owned();
    let apache_listed = String::from_utf8_lossy(&run(APACHE, &["-l"], &[]).stdout).into_owned();
    assert!(
        listed.starts_with("Compiled in modules:\n  core.c\n"),
        "{listed}"
    );
    // htaccel's own modules (htaccel_http3.c) are listed besides Apache's.
    assert!(
        listed
            .lines()
            .filter(|l| !l.trim_start().starts_with("htaccel_"))
            .all(|l| apache_listed.lines().any(|a| a == l)),
        "{listed}"
    );
    assert!(listed.contains("  htaccel_http3.c\n"), "{listed}");
}

/// WebSocket proxying: `ws://` URLs and `upgrade=` start where Apache's
/// mod_proxy_http serves them; a `ws://` URL only mod_proxy_wstunnel's own
/// tunnel would serve (no mod_proxy_http), and that tunnel asked for by
/// `ProxyWebsocketFallbackToProxyHttp Off`, are refused (`apache2 -t`
/// accepts both: the refusal is htaccel's, so its words are written
/// here); a too long `upgrade=` is refused as Apache refuses it.
#[test]
fn websocket_proxying_starts_as_in_apache_or_is_refused_loudly() {
    let root = server_root("cli-websocket");
    std::fs::create_dir_all(root.path().join("logs")).unwrap();
    let r = root.path().display().to_string();
    let modules = "/usr/lib/apache2/modules";
    let proxy = format!("LoadModule proxy_module {modules}/mod_proxy.so\n");
    let http = format!("LoadModule proxy_http_module {modules}/mod_proxy_http.so\n");
    let wstunnel = format!("LoadModule proxy_wstunnel_module {modules}/mod_proxy_wstunnel.so\n");
    let pass = "ProxyPass /ws/ ws://127.0.0.1:1/ws/\n";
    for (name, body, refusal) in [
        ("http", format!("{proxy}{http}{pass}"), None),
        ("both", format!("{proxy}{http}{wstunnel}{pass}"), None),
        (
            "upgrade",
            format!("{proxy}{http}ProxyPass /a/ http://127.0.0.1:1/a/ upgrade=ANY\n"),
            None,
        ),
        (
            "fallback-on",
            format!("{proxy}{http}{wstunnel}ProxyWebsocketFallbackToProxyHttp On\n{pass}"),
            None,
        ),
        (
            "wstunnel-alone",
            format!(
                "{proxy}{wstunnel}<Location /l/>\nProxyPass ws://127.0.0.1:1/l/\n</Location>\n"
            ),
            Some("only mod_proxy_wstunnel's own tunnel would serve it"),
        ),
        (
            "fallback-off",
            format!("{proxy}{http}{wstunnel}ProxyWebsocketFallbackToProxyHttp Off\n"),
            Some("not supported by htaccel yet"),
        ),
    ] {
        root.write(
            "main.conf",
            &format!("{HEAD}Listen 127.0.0.1:18906\n{body}"),
        );
        let path = format!("{r}/main.conf");
        let apache = run(APACHE, &["-d", &r, "-f", &path, "-t"], &[]);
        assert_eq!(apache.status.code(), Some(0), "{name}: {}", text(&apache));
        let ours = htaccel(&["-d", &r, "-f", &path, "-t"], &[]);
        match refusal {
            None => assert_eq!(ours.status.code(), Some(0), "{name}: {}", text(&ours)),
            Some(words) => {
                assert_eq!(ours.status.code(), Some(1), "{name}: {}", text(&ours));
                assert!(text(&ours).contains(words), "{name}: {}", text(&ours));
            }
        }
    }
    // Apache's own refusals of ProxyPass lines, word for word.
    for line in [
        "ProxyPass /a/ http://127.0.0.1:1/a/ upgrade=0123456789abcdef",
        "ProxyPass /a/ http://127.0.0.1:1/a/ bogus",
        "ProxyPass /a/",
        "<Location /l/>\nProxyPass /l/ ws://127.0.0.1:1/l/\n</Location>",
    ] {
        root.write(
            "refused.conf",
            &format!("{HEAD}Listen 127.0.0.1:18906\n{proxy}{http}{line}\n"),
        );
        let path = format!("{r}/refused.conf");
        let apache = run(APACHE, &["-d", &r, "-f", &path, "-t"], &[]);
        let ours = htaccel(&["-d", &r, "-f", &path, "-t"], &[]);
        assert!(
            !syntax_error(&apache).is_empty(),
            "{line}: {}",
            text(&apache)
        );
        assert_eq!(syntax_error(&ours), syntax_error(&apache), "{line}");
        assert_eq!(ours.status.code(), apache.status.code(), "{line}");
    }
}
