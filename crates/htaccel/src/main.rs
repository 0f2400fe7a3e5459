//! `htaccel`: serve a site configured with Apache httpd's syntax and its
//! `.htaccess` files.
//!
//! Commands:
//! * `htaccel serve [DOCROOT] [--listen ADDR]` — zero configuration: the
//!   document root served as by Apache with `serve.conf`.
//! * `htaccel -f FILE` — the Apache-syntax configuration in FILE, with
//!   `apache2`'s flags (`-d`, `-C`, `-c`, `-D`, `-e`, `-E`, `-k`, `-t`,
//!   `-S`, `-M`, `-v`, `-V`, `-X`: docs/command-line.md).
//! * `htaccel configtest -f FILE` — check FILE as `apachectl -t` does.
//! * `htaccel check DOCROOT [-f FILE]` — compile every `.htaccess` under
//!   DOCROOT and report errors, unsupported directives and what Apache
//!   would pay per request for them.
//! * `htaccel explain DOCROOT URL [--header 'Name: value']` — answer one
//!   request and trace each rewrite rule, condition and internal redirect.

mod allocator;
mod apachectl;
mod check;
mod cli;
mod dump;
mod explain;
mod logs;
mod migration;
mod php_scan;
mod pidfile;
mod piped_log;
mod privileges;
mod privsep;
mod reload;
mod run;
mod sd_notify;
mod startup;
mod syslog;

#[global_allocator]
static ALLOCATOR: allocator::Mimalloc = allocator::Mimalloc;

fn main() {
    // glibc re-reads /etc/localtime on every localtime_r() while TZ is
    // unset; naming the zone file once makes log timestamps syscall-free.
    if std::env::var_os("TZ").is_none() {
        std::env::set_var("TZ", ":/etc/localtime");
    }
    let code = match cli::parse(std::env::args_os()) {
        Ok(cmd) => run::execute(cmd),
        Err(e) => {
            e.print().ok();
            e.exit_code()
        }
    };
    std::process::exit(code);
}
