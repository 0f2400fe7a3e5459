//! Command-line parsing. Apache's own flags (`-d`, `-f`, `-C`, `-c`, `-D`,
//! `-e`, `-E`, `-k`, `-t`, `-S`, `-M`, `-v`, `-V`, `-X`) mean what they
//! mean to `apache2`/`httpd`, so that `apachectl`-style scripts, init
//! scripts and people run htaccel where they ran Apache; htaccel's own
//! commands are subcommands.

use clap::{Arg, ArgAction, Command};
use std::ffi::OsString;
use std::path::PathBuf;

/// What the user asked for.
#[derive(Debug)]
pub enum Cmd {
    /// Serve a document root with the built-in configuration.
    /// `php`: load mod_php (`LoadModule php_module`): `.php` files run on
    /// PHP-FPM at the address (`--php=unix:/run/php/php-fpm.sock`), or on
    /// the distribution's default pool when none is given.
    Serve {
        docroot: PathBuf,
        listen: String,
        php: Option<String>,
    },
    /// Serve with an Apache-syntax configuration (`-f`, `-d`, `-k start`).
    Config(Start),
    /// Check the configuration and exit (`-t`, `-S`, `-M`): the dumps to
    /// print are `-D DUMP_VHOSTS`, `DUMP_RUN_CFG`, `DUMP_MODULES`.
    ConfigTest(Start),
    /// `-k ACTION`: signal the server whose `PidFile` the configuration
    /// names (`start` detaches a new one).
    Signal(Start, Action),
    /// `-v`.
    Version,
    /// `-l`.
    CompiledModules,
    /// `-V`.
    Settings,
    /// Compile every access file under a document root (or of every
    /// site of a configuration) and report.
    Check(crate::check::Options),
    /// Answer one request without a socket and trace why.
    Explain {
        docroot: PathBuf,
        url: String,
        method: String,
        headers: Vec<String>,
        file: Option<PathBuf>,
        defines: Vec<String>,
    },
}

/// How to find and read the configuration, as `apache2`'s flags say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Start {
    /// `-d`: the initial `ServerRoot`.
    pub server_root: Option<PathBuf>,
    /// `-f`: the configuration file, relative to `ServerRoot` unless absolute.
    pub file: Option<PathBuf>,
    /// `-D`.
    pub defines: Vec<String>,
    /// `-C`: directives read before the configuration file.
    pub before: Vec<String>,
    /// `-c`: directives read after it.
    pub after: Vec<String>,
    /// `-e`: the least severe start-up message shown.
    pub startup_level: Option<String>,
    /// `-E`: where start-up messages go.
    pub startup_log: Option<PathBuf>,
    /// `-X`: one worker thread (Apache: one worker process, no detaching).
    pub single: bool,
    /// `-T`: no warning about a missing `DocumentRoot`.
    pub no_docroot_check: bool,
}

impl Start {
    pub fn defined(&self, name: &str) -> bool {
        self.defines.iter().any(|d| d == name)
    }
}

/// `-k`'s actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Start,
    Stop,
    Restart,
    Graceful,
    GracefulStop,
}

impl Action {
    fn parse(word: &str) -> Option<Action> {
        Some(match word {
            "start" => Action::Start,
            "stop" => Action::Stop,
            "restart" => Action::Restart,
            "graceful" => Action::Graceful,
            "graceful-stop" => Action::GracefulStop,
            _ => return None,
        })
    }
}

fn command() -> Command {
    let file = Arg::new("file")
        .short('f')
        .long("config")
        .value_name("FILE")
        .help("Apache-syntax configuration file");
    let define = Arg::new("define")
        .short('D')
        .value_name("NAME")
        .action(ArgAction::Append)
        .help("Define a name for <IfDefine> (as apache2 -D)");
    let flag = |id: &'static str, short: char, help: &'static str| {
        Arg::new(id)
            .short(short)
            .action(ArgAction::SetTrue)
            .help(help)
    };
    let many = |id: &'static str, short: char, name: &'static str, help: &'static str| {
        Arg::new(id)
            .short(short)
            .value_name(name)
            .action(ArgAction::Append)
            .help(help)
    };
    Command::new("htaccel")
        .about("A web server that honours Apache httpd .htaccess files, compiled once instead of parsed per request")
        .disable_version_flag(true)
        .args_conflicts_with_subcommands(true)
        .arg(file.clone())
        .arg(define.clone())
        .arg(Arg::new("root").short('d').value_name("DIRECTORY").help("Initial ServerRoot (as apache2 -d)"))
        .arg(many("before", 'C', "DIRECTIVE", "Process a directive before reading the configuration file"))
        .arg(many("after", 'c', "DIRECTIVE", "Process a directive after reading the configuration file"))
        .arg(Arg::new("level").short('e').value_name("LEVEL").help("Show start-up messages of LEVEL and more severe (see LogLevel)"))
        .arg(Arg::new("startup_log").short('E').value_name("FILE").help("Send start-up messages (all of standard error) to FILE"))
        .arg(Arg::new("k").short('k').value_name("ACTION").help("start|restart|graceful|graceful-stop|stop: signal the server named by PidFile (start: start one in the background)"))
        .arg(flag("test", 't', "Check the configuration file and exit (as apache2 -t)"))
        .arg(flag("S", 'S', "Show the virtual hosts and run settings (-t -D DUMP_VHOSTS -D DUMP_RUN_CFG)"))
        .arg(flag("M", 'M', "Show the loaded modules (-t -D DUMP_MODULES)"))
        .arg(flag("v", 'v', "Show the version").long("version"))
        .arg(flag("V", 'V', "Show the version and build settings"))
        .arg(flag("X", 'X', "Debug mode: one worker thread, in the foreground"))
        .arg(flag("l", 'l', "List the modules compiled in"))
        .arg(flag("T", 'T', "Start without the DocumentRoot check (no warning for a missing one)"))
        .subcommand(
            Command::new("serve")
                .about("Serve DOCROOT with .htaccess enabled, as Apache with the built-in configuration")
                .arg(Arg::new("docroot").value_name("DOCROOT").default_value(".").help("Directory to serve"))
                .arg(Arg::new("listen").long("listen").short('l').value_name("ADDR").default_value("127.0.0.1:8080").help("Address and port to listen on"))
                .arg(Arg::new("php").long("php").value_name("FPM").num_args(0..=1).default_missing_value("").help("Load mod_php: .php files run on PHP-FPM at FPM (unix:/run/php/php-fpm.sock, a .sock path, or host:port), without FPM on the distribution's default pool (refused when there is none); php_value, php_flag and the php_admin_* forms accepted; index.php as directory index")),
        )
        .subcommand(
            Command::new("check")
                .about("Compile every .htaccess under DOCROOT as a request would, or, with -d or -f and no DOCROOT, of every site of a server (the migration report); list errors, unsupported directives and documented differences from Apache")
                .arg(Arg::new("docroot").value_name("DOCROOT").required_unless_present_any(["root", "file"]).help("Directory to check"))
                .arg(file.clone().help("Apache-syntax configuration (with DOCROOT: whose override settings apply, default the built-in serve configuration; without: the server to report on, relative to -d)"))
                .arg(Arg::new("root").short('d').value_name("DIRECTORY").help("ServerRoot of the configuration to report on (as apache2 -d)"))
                .arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("Write the findings as JSON"))
                .arg(define.clone()),
        )
        .subcommand(
            Command::new("explain")
                .about("Answer one request for URL under DOCROOT and show each rewrite rule and condition tried, every internal redirect, and the response")
                .arg(Arg::new("docroot").value_name("DOCROOT").required(true).help("Directory served"))
                .arg(Arg::new("url").value_name("URL").required(true).help("Request target or absolute URL (its host becomes Host)"))
                .arg(Arg::new("header").long("header").short('H').value_name("NAME: VALUE").action(ArgAction::Append).help("A request header (repeatable)"))
                .arg(Arg::new("method").long("method").short('X').value_name("METHOD").default_value("GET").help("Request method"))
                .arg(file.clone().help("Apache-syntax configuration (default: the built-in serve configuration)"))
                .arg(define.clone()),
        )
        .subcommand(
            Command::new("configtest")
                .about("Check an Apache-syntax configuration file, as apachectl -t")
                .arg(file.required(true))
                .arg(define),
        )
}

/// Whether `--php`'s value names PHP-FPM: `unix:…`, a `.sock` path, or `host:port`.
fn is_fpm_address(w: &str) -> bool {
    w.starts_with("unix:")
        || w.ends_with(".sock")
        || w.rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cmd, clap::Error> {
    let mut cmd = command();
    let m = cmd.try_get_matches_from_mut(args)?;
    let defines = |m: &clap::ArgMatches| {
        m.get_many::<String>("define")
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    };
    match m.subcommand() {
        Some(("serve", s)) => {
            let mut docroot = s.get_one::<String>("docroot").expect("has default").clone();
            let mut php = s.get_one::<String>("php").cloned();
            // `serve --php DOCROOT`: the word after a bare --php is the
            // document root unless it names a PHP-FPM address.
            if let Some(word) = php.clone().filter(|w| !w.is_empty() && !is_fpm_address(w)) {
                if s.value_source("docroot") == Some(clap::parser::ValueSource::DefaultValue) {
                    docroot = word;
                    php = Some(String::new());
                }
            }
            Ok(Cmd::Serve {
                docroot: PathBuf::from(docroot),
                listen: s.get_one::<String>("listen").expect("has default").clone(),
                php,
            })
        }
        Some(("check", s)) => Ok(Cmd::Check(crate::check::Options {
            docroot: s.get_one::<String>("docroot").map(PathBuf::from),
            start: Start {
                server_root: s.get_one::<String>("root").map(PathBuf::from),
                file: s.get_one::<String>("file").map(PathBuf::from),
                defines: defines(s),
                ..Start::default()
            },
            json: s.get_flag("json"),
        })),
        Some(("explain", s)) => Ok(Cmd::Explain {
            docroot: PathBuf::from(s.get_one::<String>("docroot").expect("required")),
            url: s.get_one::<String>("url").expect("required").clone(),
            method: s.get_one::<String>("method").expect("has default").clone(),
            headers: s
                .get_many::<String>("header")
                .map(|v| v.cloned().collect())
                .unwrap_or_default(),
            file: s.get_one::<String>("file").map(PathBuf::from),
            defines: defines(s),
        }),
        Some(("configtest", s)) => Ok(Cmd::ConfigTest(Start {
            file: Some(PathBuf::from(s.get_one::<String>("file").expect("required"))),
            defines: defines(s),
            ..Start::default()
        })),
        _ => top_level(&m).ok_or_else(|| {
            cmd.error(
                clap::error::ErrorKind::MissingSubcommand,
                "say what to serve: `htaccel serve DOCROOT`, `htaccel -f FILE` or `htaccel -d SERVERROOT`",
            )
        })?,
    }
}

/// Apache's own flags; `None` when nothing says what to serve.
fn top_level(m: &clap::ArgMatches) -> Option<Result<Cmd, clap::Error>> {
    if m.get_flag("v") {
        return Some(Ok(Cmd::Version));
    }
    if m.get_flag("V") {
        return Some(Ok(Cmd::Settings));
    }
    if m.get_flag("l") {
        return Some(Ok(Cmd::CompiledModules));
    }
    let strings = |id: &str| -> Vec<String> {
        m.get_many::<String>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    };
    let mut start = Start {
        server_root: m.get_one::<String>("root").map(PathBuf::from),
        file: m.get_one::<String>("file").map(PathBuf::from),
        defines: strings("define"),
        before: strings("before"),
        after: strings("after"),
        startup_level: m.get_one::<String>("level").cloned(),
        startup_log: m.get_one::<String>("startup_log").map(PathBuf::from),
        single: m.get_flag("X"),
        no_docroot_check: m.get_flag("T"),
    };
    let mut test = m.get_flag("test");
    for (flag, dumps) in [
        ("S", &["DUMP_VHOSTS", "DUMP_RUN_CFG"][..]),
        ("M", &["DUMP_MODULES"][..]),
    ] {
        if m.get_flag(flag) {
            test = true;
            start.defines.extend(dumps.iter().map(|d| d.to_string()));
        }
    }
    // Nothing of Apache's asked for: say what htaccel can do instead of
    // guessing a configuration.
    let asked = start != Start::default() || test || m.get_one::<String>("k").is_some();
    if !asked {
        return None;
    }
    if let Some(word) = m.get_one::<String>("k") {
        return Some(match Action::parse(word) {
            Some(action) => Ok(Cmd::Signal(start, action)),
            None => Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "-k {word}: the actions are start, restart, graceful, graceful-stop and stop\n"
                ),
            )),
        });
    }
    Some(Ok(if test {
        Cmd::ConfigTest(start)
    } else {
        Cmd::Config(start)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Cmd {
        parse(args.iter().map(OsString::from)).unwrap()
    }

    #[test]
    fn serve_php() {
        let php = |args: &[&str]| match p(args) {
            Cmd::Serve { docroot, php, .. } => (docroot, php),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            php(&[
                "htaccel",
                "serve",
                "--php",
                "unix:/run/php/fpm.sock",
                "/srv"
            ]),
            (PathBuf::from("/srv"), Some("unix:/run/php/fpm.sock".into()))
        );
        assert_eq!(
            php(&["htaccel", "serve", "--php=127.0.0.1:9000"]),
            (PathBuf::from("."), Some("127.0.0.1:9000".into()))
        );
        assert_eq!(
            php(&["htaccel", "serve", "--php", "/srv/www"]),
            (PathBuf::from("/srv/www"), Some(String::new()))
        );
        assert_eq!(
            php(&["htaccel", "serve", "/srv", "--php"]),
            (PathBuf::from("/srv"), Some(String::new()))
        );
    }

    #[test]
    fn serve_defaults_and_apache_flags() {
        match p(&["htaccel", "serve"]) {
            Cmd::Serve {
                docroot,
                listen,
                php,
            } => {
                assert_eq!(docroot, PathBuf::from("."));
                assert_eq!(listen, "127.0.0.1:8080");
                assert_eq!(php, None);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(p(&["htaccel", "-f", "x.conf", "-D", "A"]), Cmd::Config(s) if s.defines == ["A"])
        );
        assert!(matches!(
            p(&["htaccel", "-t", "-f", "x.conf"]),
            Cmd::ConfigTest(_)
        ));
        assert!(matches!(
            p(&["htaccel", "configtest", "-f", "x.conf"]),
            Cmd::ConfigTest(_)
        ));
        assert!(matches!(
            p(&["htaccel", "check", "site"]),
            Cmd::Check(crate::check::Options {
                docroot: Some(_),
                start: Start { file: None, .. },
                ..
            })
        ));
        assert!(matches!(
            p(&["htaccel", "check", "site", "-f", "x.conf"]),
            Cmd::Check(crate::check::Options {
                start: Start { file: Some(_), .. },
                ..
            })
        ));
        assert!(matches!(
            p(&["htaccel", "check", "-d", "/etc/apache2", "--json"]),
            Cmd::Check(crate::check::Options {
                docroot: None,
                json: true,
                ..
            })
        ));
        assert!(
            matches!(p(&["htaccel", "explain", "site", "/x", "--header", "A: b"]), Cmd::Explain { headers, .. } if headers == ["A: b"])
        );
    }

    #[test]
    fn apache_flags() {
        match p(&[
            "htaccel",
            "-d",
            "/etc/apache2",
            "-DFOREGROUND",
            "-C",
            "Define A",
            "-c",
            "Define B",
            "-e",
            "info",
            "-E",
            "/tmp/e",
            "-X",
        ]) {
            Cmd::Config(s) => assert_eq!(
                s,
                Start {
                    server_root: Some("/etc/apache2".into()),
                    file: None,
                    defines: vec!["FOREGROUND".into()],
                    before: vec!["Define A".into()],
                    after: vec!["Define B".into()],
                    startup_level: Some("info".into()),
                    startup_log: Some("/tmp/e".into()),
                    single: true,
                    no_docroot_check: false,
                }
            ),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(p(&["htaccel", "-d", "/r", "-S"]), Cmd::ConfigTest(s) if s.defines == ["DUMP_VHOSTS", "DUMP_RUN_CFG"])
        );
        assert!(
            matches!(p(&["htaccel", "-f", "/x", "-M"]), Cmd::ConfigTest(s) if s.defines == ["DUMP_MODULES"])
        );
        assert!(matches!(
            p(&["htaccel", "-f", "/x", "-k", "graceful-stop"]),
            Cmd::Signal(_, Action::GracefulStop)
        ));
        assert!(parse(["htaccel", "-f", "/x", "-k", "bogus"].map(OsString::from)).is_err());
        assert!(matches!(p(&["htaccel", "-v"]), Cmd::Version));
        assert!(matches!(p(&["htaccel", "--version"]), Cmd::Version));
        assert!(matches!(p(&["htaccel", "-V"]), Cmd::Settings));
        assert!(matches!(p(&["htaccel", "-l"]), Cmd::CompiledModules));
        assert!(matches!(p(&["htaccel", "-f", "/x", "-T"]), Cmd::Config(s) if s.no_docroot_check));
    }
}
