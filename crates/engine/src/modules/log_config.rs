//! mod_log_config: `LogFormat`, `CustomLog`, `GlobalLog`, `TransferLog`. The formats
//! are compiled by `crate::log_format`; here they are only recorded for
//! the server being configured.

use crate::config::server::{CustomLog, LogCondition};
use crate::config::{Invocation, Walker};
use crate::registry::{Args, Directive, Module, Run, RSRC_CONF};

pub static DIRECTIVES: &[Directive] = &[
    Directive { name: "LogFormat", args: Args::Take12, req_override: RSRC_CONF, about: "a log format string (see docs) and an optional format name", run: Run::Handler(|w, inv, _| {
        let server = w.server()?;
        let nick = inv.words.get(1).cloned().unwrap_or_default();
        server.log_formats.insert(nick, inv.words[0].clone());
        Ok(())
    }) },
    Directive { name: "CustomLog", args: Args::Take23, req_override: RSRC_CONF, about: "a file name, a custom log format string or format name, and an optional \"env=\" or \"expr=\" clause (see docs)", run: Run::Handler(|w, inv, _| add_custom_log(w, inv, false)) },
    Directive { name: "GlobalLog", args: Args::Take23, req_override: RSRC_CONF, about: "Same as CustomLog, but forces virtualhosts to inherit the log", run: Run::Handler(|w, inv, _| {
        let build = w.server.as_deref_mut().ok_or("GlobalLog not allowed here")?;
        if build.in_virtual_host() {
            return Err("GlobalLog cannot occur within <VirtualHost> section".into());
        }
        add_custom_log(w, inv, true)
    }) },
    Directive { name: "TransferLog", args: Args::Take1, req_override: RSRC_CONF, about: "the filename of the access log", run: Run::Handler(|w, inv, _| {
        let origin = inv.origin.clone();
        w.server()?.custom_logs.push(CustomLog { target: inv.words[0].clone(), format: String::new(), origin, condition: None, inherit: false });
        Ok(())
    }) },
    Directive { name: "BufferedLogs", args: Args::Flag, req_override: RSRC_CONF, about: "Enable Buffered Logging (experimental)", run: Run::Handler(|_w, _inv, _c| Ok(())) },
];

/// `CustomLog`, or with `inherit` `GlobalLog`: a log of the server being
/// configured.
fn add_custom_log(w: &mut Walker<'_>, inv: &Invocation<'_>, inherit: bool) -> Result<(), String> {
    let condition = match inv.words.get(2) {
        None => None,
        Some(clause) => Some(condition(clause)?),
    };
    let origin = inv.origin.clone();
    w.server()?.custom_logs.push(CustomLog {
        target: inv.words[0].clone(),
        format: inv.words[1].clone(),
        origin,
        condition,
        inherit,
    });
    Ok(())
}

fn condition(clause: &str) -> Result<LogCondition, String> {
    LogCondition::parse(clause)
}

pub static MODULE: Module = Module {
    source: "mod_log_config.c",
    identifier: "log_config_module",
    builtin: true,
    directives: DIRECTIVES,
};
