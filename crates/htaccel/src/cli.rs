//! Command-line parsing. Apache's own flags (`-f`, `-D`, `-t`) are kept so
//! that people can run htaccel where they ran `apache2`.

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
    /// Serve with an Apache-syntax configuration file.
    Config { file: PathBuf, defines: Vec<String> },
    /// Check a configuration file and exit.
    ConfigTest { file: PathBuf, defines: Vec<String> },
    /// Compile every access file under a document root and report.
    Check {
        docroot: PathBuf,
        file: Option<PathBuf>,
        defines: Vec<String>,
    },
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
    Command::new("htaccel")
        .version(env!("CARGO_PKG_VERSION"))
        .about("A web server that honours Apache httpd .htaccess files, compiled once instead of parsed per request")
        .args_conflicts_with_subcommands(true)
        .arg(file.clone())
        .arg(define.clone())
        .arg(Arg::new("test").short('t').action(ArgAction::SetTrue).help("Check the configuration file and exit (as apache2 -t)"))
        .subcommand(
            Command::new("serve")
                .about("Serve DOCROOT with .htaccess enabled, as Apache with the built-in configuration")
                .arg(Arg::new("docroot").value_name("DOCROOT").default_value(".").help("Directory to serve"))
                .arg(Arg::new("listen").long("listen").short('l').value_name("ADDR").default_value("127.0.0.1:8080").help("Address and port to listen on"))
                .arg(Arg::new("php").long("php").value_name("FPM").num_args(0..=1).default_missing_value("").help("Load mod_php: .php files run on PHP-FPM at FPM (unix:/run/php/php-fpm.sock, a .sock path, or host:port), without FPM on the distribution's default pool (refused when there is none); php_value, php_flag and the php_admin_* forms accepted; index.php as directory index")),
        )
        .subcommand(
            Command::new("check")
                .about("Compile every .htaccess under DOCROOT as a request would; list errors and unsupported directives")
                .arg(Arg::new("docroot").value_name("DOCROOT").required(true).help("Directory to check"))
                .arg(file.clone().help("Apache-syntax configuration whose override settings apply (default: the built-in serve configuration)"))
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
        Some(("check", s)) => Ok(Cmd::Check {
            docroot: PathBuf::from(s.get_one::<String>("docroot").expect("required")),
            file: s.get_one::<String>("file").map(PathBuf::from),
            defines: defines(s),
        }),
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
        Some(("configtest", s)) => Ok(Cmd::ConfigTest {
            file: PathBuf::from(s.get_one::<String>("file").expect("required")),
            defines: defines(s),
        }),
        _ => match m.get_one::<String>("file") {
            Some(f) if m.get_flag("test") => Ok(Cmd::ConfigTest {
                file: f.into(),
                defines: defines(&m),
            }),
            Some(f) => Ok(Cmd::Config {
                file: f.into(),
                defines: defines(&m),
            }),
            None => Err(cmd.error(
                clap::error::ErrorKind::MissingSubcommand,
                "say what to serve: `htaccel serve DOCROOT` or `htaccel -f FILE`",
            )),
        },
    }
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
            matches!(p(&["htaccel", "-f", "x.conf", "-D", "A"]), Cmd::Config { defines, .. } if defines == ["A"])
        );
        assert!(matches!(
            p(&["htaccel", "-t", "-f", "x.conf"]),
            Cmd::ConfigTest { .. }
        ));
        assert!(matches!(
            p(&["htaccel", "configtest", "-f", "x.conf"]),
            Cmd::ConfigTest { .. }
        ));
        assert!(matches!(
            p(&["htaccel", "check", "site"]),
            Cmd::Check { file: None, .. }
        ));
        assert!(matches!(
            p(&["htaccel", "check", "site", "-f", "x.conf"]),
            Cmd::Check { file: Some(_), .. }
        ));
        assert!(
            matches!(p(&["htaccel", "explain", "site", "/x", "--header", "A: b"]), Cmd::Explain { headers, .. } if headers == ["A: b"])
        );
    }
}
