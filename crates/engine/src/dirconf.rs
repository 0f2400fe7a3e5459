//! The per-directory configuration: one typed slot per module, and the
//! merge of a parent with a child in Apache's order.
//!
//! Apache gives every module a `create_dir_config`/`merge_dir_config` pair;
//! a request's configuration is the fold of those merges over the sections
//! that apply to it. `DirConf` is that vector of module configs, made
//! concrete: each field belongs to one module and is merged by that
//! module's own rule.

use crate::modules::core::CoreDir;

/// `DirConf` with one field per module of `modules::dir_slots!`, and its
/// merge: each field by its module's own rule.
macro_rules! dir_conf {
    ($($field:ident: $slot:ty,)*) => {
        /// Configuration that applies to a directory, a `.htaccess`, a
        /// `<Files>` section or any other per-directory scope — before or
        /// after merging.
        #[derive(Clone, Debug, Default)]
        pub struct DirConf {
            $(pub $field: $slot,)*
        }

        impl DirConf {
            /// `base` with `new` merged on top, module by module.
            pub fn merge(base: &DirConf, new: &DirConf) -> DirConf {
                DirConf {
                    $($field: <$slot>::merge(&base.$field, &new.$field),)*
                }
            }
        }
    };
}

crate::modules::dir_slots!(dir_conf);

impl DirConf {
    /// A configuration for a section of the main config or a `.htaccess`
    /// (Apache's `create_dir_config` with a directory name).
    pub fn for_section() -> Self {
        DirConf {
            core: CoreDir::for_section(),
            ..Default::default()
        }
    }

    /// The server-wide base (Apache's `create_dir_config` with no directory).
    pub fn for_server() -> Self {
        DirConf {
            core: CoreDir::for_server(),
            ..Default::default()
        }
    }
}
