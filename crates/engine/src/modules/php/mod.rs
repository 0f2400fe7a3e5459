//! mod_php, as htaccel stands in for it: a configuration that loads
//! mod_php (`LoadModule php_module …`, its PHP 5/7/8 names, any
//! `libphp*.so`) expects `.php` files to run, and htaccel runs them on a
//! PHP-FPM pool instead of in process (`pool`: htaccel's `PHPFPMSocket`,
//! else the distribution's default pool, else no start), with mod_php's
//! handler names and checks (`handler`).
//!
//! This file holds mod_php's configuration directives: `php_value`,
//! `php_flag`, `php_admin_value`, `php_admin_flag` (and `PHPINIDir`),
//! recorded per directory for the FastCGI layer, which hands them to
//! PHP-FPM as `PHP_VALUE` and `PHP_ADMIN_VALUE`.
//!
//! Apache without mod_php — the usual PHP-FPM setup, and htaccel's default
//! — does not know these names: a `.htaccess` using them outside a false
//! `<IfModule mod_php…>` fails with "Invalid command 'php_value'…" (500).
//! htaccel answers exactly that unless the configuration loads mod_php
//! (which `htaccel serve --php` does): then they are accepted as mod_php
//! accepts them, `<IfModule mod_php.c>` is true, and nothing is executed
//! in process.
//!
//! As in mod_php: `php_value`/`php_flag` need `AllowOverride Options` in a
//! `.htaccess`; the admin forms are main-configuration only; a value of
//! `none` means empty; a flag is `1` for `On` or `1`, else `0`; a child
//! directory overrides a setting unless the parent's was an admin one.

pub mod handler;
pub mod pool;

use crate::config::{Invocation, Walker};
use crate::dirconf::DirConf;
use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_OPTIONS, RSRC_CONF};
use std::sync::Arc;

/// One PHP ini setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub name: String,
    pub value: String,
    /// Set by `php_admin_*` (PHP's `PHP_INI_SYSTEM`): a `php_value` below
    /// cannot change it.
    pub admin: bool,
    /// Written in a `.htaccess` (PHP's `PHP_INI_STAGE_HTACCESS`).
    pub htaccess: bool,
}

/// The per-directory slot: settings in the order first written.
#[derive(Clone, Debug, Default)]
pub struct PhpDir {
    pub settings: Arc<Vec<Setting>>,
}

impl PhpDir {
    pub fn merge(base: &PhpDir, new: &PhpDir) -> PhpDir {
        if new.settings.is_empty() {
            return base.clone();
        }
        if base.settings.is_empty() {
            return new.clone();
        }
        let mut merged = (*base.settings).clone();
        for s in new.settings.iter() {
            match merged.iter_mut().find(|m| m.name == s.name) {
                // mod_php: the new entry wins unless it is of a lower level.
                Some(m) if s.admin || !m.admin => *m = s.clone(),
                Some(_) => {}
                None => merged.push(s.clone()),
            }
        }
        PhpDir {
            settings: Arc::new(merged),
        }
    }

    /// `PHP_VALUE` for PHP-FPM: `name=value` lines of the ordinary settings.
    pub fn php_value(&self) -> Option<String> {
        self.lines(false)
    }

    /// `PHP_ADMIN_VALUE` for PHP-FPM: the admin settings.
    pub fn php_admin_value(&self) -> Option<String> {
        self.lines(true)
    }

    fn lines(&self, admin: bool) -> Option<String> {
        let mut out = String::new();
        for s in self.settings.iter().filter(|s| s.admin == admin) {
            out.push_str(&s.name);
            out.push('=');
            out.push_str(&s.value);
            out.push('\n');
        }
        (!out.is_empty()).then_some(out)
    }
}

fn set(w: &Walker<'_>, c: &mut DirConf, name: &str, value: String, admin: bool) {
    let setting = Setting {
        name: name.to_string(),
        value,
        admin,
        htaccess: w.ctx.htaccess,
    };
    let list = Arc::make_mut(&mut c.php.settings);
    match list.iter_mut().find(|s| s.name == name) {
        Some(s) => *s = setting,
        None => list.push(setting),
    }
}

fn value(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf, admin: bool) {
    let v = &inv.words[1];
    let v = if v.eq_ignore_ascii_case("none") {
        String::new()
    } else {
        v.clone()
    };
    set(w, c, &inv.words[0], v, admin);
}

fn flag(w: &mut Walker<'_>, inv: &Invocation<'_>, c: &mut DirConf, admin: bool) {
    let v = &inv.words[1];
    let on = v.eq_ignore_ascii_case("on") || v == "1";
    set(
        w,
        c,
        &inv.words[0],
        if on { "1" } else { "0" }.into(),
        admin,
    );
}

pub static DIRECTIVES: &[Directive] = &[
    Directive {
        name: "php_value",
        args: Args::Take2,
        req_override: OR_OPTIONS,
        about: "PHP Value Modifier",
        run: Run::Handler(|w, inv, c| {
            value(w, inv, c, false);
            Ok(())
        }),
    },
    Directive {
        name: "php_flag",
        args: Args::Take2,
        req_override: OR_OPTIONS,
        about: "PHP Flag Modifier",
        run: Run::Handler(|w, inv, c| {
            flag(w, inv, c, false);
            Ok(())
        }),
    },
    Directive {
        name: "php_admin_value",
        args: Args::Take2,
        req_override: ACCESS_CONF | RSRC_CONF,
        about: "PHP Value Modifier (Admin)",
        run: Run::Handler(|w, inv, c| {
            value(w, inv, c, true);
            Ok(())
        }),
    },
    Directive {
        name: "php_admin_flag",
        args: Args::Take2,
        req_override: ACCESS_CONF | RSRC_CONF,
        about: "PHP Flag Modifier (Admin)",
        run: Run::Handler(|w, inv, c| {
            flag(w, inv, c, true);
            Ok(())
        }),
    },
    Directive {
        name: "PHPFPMSocket",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "htaccel's own: the PHP-FPM pool that runs PHP for mod_php (unix:/path/to/php-fpm.sock, or host:port)",
        run: Run::Handler(|w, inv, _c| {
            let build = w
                .server
                .as_deref_mut()
                .ok_or("PHPFPMSocket not allowed here")?;
            if build.in_virtual_host() {
                return Err("PHPFPMSocket cannot occur within <VirtualHost> section".into());
            }
            pool::target(&inv.words[0])?;
            build.global.php_fpm_socket = Some((inv.words[0].clone(), inv.origin.clone()));
            Ok(())
        }),
    },
    Directive {
        name: "PHPINIDir",
        args: Args::Take1,
        req_override: RSRC_CONF,
        about: "Directory containing the php.ini file",
        run: Run::Handler(|_w, _inv, _c| {
            Err("PHPINIDir is not supported by htaccel (PHP-FPM reads its own php.ini)".into())
        }),
    },
];

/// PHP 8's module; PHP 7's and 5's names are accepted too, so that the
/// `<IfModule>` guards written for them behave as with that mod_php.
pub static MODULE: Module = Module {
    source: "mod_php.c",
    identifier: "php_module",
    builtin: false,
    directives: DIRECTIVES,
};
pub static MODULE7: Module = Module {
    source: "mod_php7.c",
    identifier: "php7_module",
    builtin: false,
    directives: DIRECTIVES,
};
pub static MODULE5: Module = Module {
    source: "mod_php5.c",
    identifier: "php5_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// PHP 8 as some builds name it.
pub static MODULE8: Module = Module {
    source: "mod_php8.c",
    identifier: "php8_module",
    builtin: false,
    directives: DIRECTIVES,
};

/// Whether `m` is one of mod_php's names.
pub fn is_mod_php(m: &Module) -> bool {
    [&MODULE, &MODULE7, &MODULE5, &MODULE8]
        .iter()
        .any(|p| std::ptr::eq(*p, m))
}

/// mod_php loaded under a name htaccel does not list, recognised by its
/// file (`libphp.so`, `libphp8.2.so`, `libphp7.so`, `mod_php5.so`).
pub fn by_file(file: &str) -> Option<&'static Module> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.strip_suffix(".so")?;
    let version = stem
        .strip_prefix("libphp")
        .or_else(|| stem.strip_prefix("mod_php"))?;
    version
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.')
        .then_some(&MODULE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Context, Environment, Walker};

    fn read(text: &str, htaccess: bool, modules: &[&'static Module]) -> Result<DirConf, String> {
        let nodes = htaccel_conf::parse_str(text, "t", &Default::default()).unwrap();
        let mut env = Environment {
            modules: crate::modules::builtin()
                .into_iter()
                .chain(modules.iter().copied())
                .collect(),
            defines: Default::default(),
            server_root: "/".into(),
            includes: Default::default(),
            read: Default::default(),
            stand_ins: Vec::new(),
        };
        let mut ctx = Context::main_server();
        if htaccess {
            ctx.htaccess = true;
            ctx.override_mask = crate::registry::OR_ALL;
        }
        let mut w = Walker::new(&mut env, None, ctx);
        let mut c = DirConf::for_section();
        w.walk(&nodes, &mut c).map_err(|e| e.message)?;
        Ok(c)
    }

    #[test]
    fn unknown_without_mod_php() {
        let e = read("php_value memory_limit 64M\n", true, &[]).unwrap_err();
        assert_eq!(
            e,
            "Invalid command 'php_value', perhaps misspelled or defined by a module not included in the server configuration"
        );
    }

    #[test]
    fn recorded_with_mod_php() {
        let c = read(
            "php_value memory_limit 64M\nphp_flag engine off\nphp_flag display_errors On\nphp_value open_basedir none\nphp_value memory_limit 128M\n",
            true,
            &[&MODULE],
        )
        .unwrap();
        assert_eq!(
            c.php.php_value().unwrap(),
            "memory_limit=128M\nengine=0\ndisplay_errors=1\nopen_basedir=\n"
        );
        assert!(c.php.settings.iter().all(|s| s.htaccess && !s.admin));
        assert_eq!(c.php.php_admin_value(), None);
    }

    #[test]
    fn admin_forms_not_in_htaccess() {
        let e = read("php_admin_value memory_limit 64M\n", true, &[&MODULE]).unwrap_err();
        assert_eq!(e, "php_admin_value not allowed here");
        let c = read("php_admin_flag engine on\n", false, &[&MODULE7]).unwrap();
        assert_eq!(c.php.php_admin_value().unwrap(), "engine=1\n");
    }

    #[test]
    fn admin_settings_are_not_overridden() {
        let s = |name: &str, value: &str, admin: bool| Setting {
            name: name.into(),
            value: value.into(),
            admin,
            htaccess: !admin,
        };
        let base = PhpDir {
            settings: Arc::new(vec![
                s("engine", "0", true),
                s("memory_limit", "64M", false),
            ]),
        };
        let child = PhpDir {
            settings: Arc::new(vec![
                s("engine", "1", false),
                s("memory_limit", "128M", false),
                s("x", "y", false),
            ]),
        };
        let m = PhpDir::merge(&base, &child);
        assert_eq!(m.php_admin_value().unwrap(), "engine=0\n");
        assert_eq!(m.php_value().unwrap(), "memory_limit=128M\nx=y\n");
    }
}
