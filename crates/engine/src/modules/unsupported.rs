//! Directives that Apache modules loaded by the configuration provide but
//! htaccel does not implement yet. They are registered with their real
//! contexts and override classes, so that "not allowed here" is answered as
//! Apache answers it; where Apache would accept them, htaccel refuses them
//! loudly (the file fails with a 500 and an error-log line naming the
//! directive) rather than ignoring rules a site relies on.

use crate::registry::{Args, Directive, Module, Run, ACCESS_CONF, OR_FILEINFO, RSRC_CONF};

/// Nothing to carry: the directives here never configure anything.
#[derive(Clone, Debug, Default)]
pub struct UnsupportedDir;

impl UnsupportedDir {
    pub fn merge(_base: &UnsupportedDir, _new: &UnsupportedDir) -> UnsupportedDir {
        UnsupportedDir
    }
}

/// Whether `d` is refused as not supported (`htaccel check` lists them).
pub fn is_unsupported(d: &Directive) -> bool {
    matches!(d.run, Run::Unsupported)
}

macro_rules! unsupported {
    ($($name:literal => $ovr:expr),* $(,)?) => {
        &[ $( Directive { name: $name, args: Args::Raw, req_override: $ovr, about: "", run: Run::Unsupported }, )* ]
    };
}

const FI: u32 = OR_FILEINFO | ACCESS_CONF | RSRC_CONF;

/// `<If>`/`<ElseIf>`/`<Else>` and `SetInputFilter` belong to the core.
pub static CORE_EXTRA: Module = Module {
    source: "core.c",
    identifier: "core_module",
    builtin: true,
    directives: unsupported!(
        "SetInputFilter" => FI, "ContentDigest" => crate::registry::OR_OPTIONS | ACCESS_CONF | RSRC_CONF,
    ),
};
