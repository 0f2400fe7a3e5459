//! `ErrorDocument` targets are string expressions in Apache 2.4: the text
//! or URL is compiled with the configuration (`Cannot parse expression in
//! ErrorDocument: …` fails the file) and evaluated when the error is
//! answered, so `ErrorDocument 404 "No %{REQUEST_URI} here"` names the
//! request, and backslash escapes in the text are the expression
//! language's.
//!
//! Whether the target is a text, a local path or a URL is decided from
//! the configured text, before evaluation, as Apache does; a text whose
//! expression is a constant is stored already evaluated, so only targets
//! with variables cost anything per request.

use super::ErrorDocument;
use crate::expr::{RequestExpr, StrExpr};
use crate::request::Ctx;
use std::sync::Arc;

/// Compile a classified target (not `Default`) as Apache does.
pub fn compile(doc: ErrorDocument, restricted: bool) -> Result<ErrorDocument, String> {
    let (text, is_text) = match &doc {
        ErrorDocument::Text(t) => (t, true),
        ErrorDocument::Local(t) | ErrorDocument::Remote(t) => (t, false),
        ErrorDocument::Default | ErrorDocument::Expr { .. } => return Ok(doc),
    };
    let expr = StrExpr::parse_restricted(text, restricted)
        .map_err(|e| format!("Cannot parse expression in ErrorDocument: {e}"))?;
    if let Some(constant) = expr.constant() {
        let value = String::from_utf8_lossy(constant).into_owned();
        return Ok(match doc {
            ErrorDocument::Text(_) => ErrorDocument::Text(value),
            ErrorDocument::Local(_) => ErrorDocument::Local(value),
            _ => ErrorDocument::Remote(value),
        });
    }
    Ok(ErrorDocument::Expr {
        expr: Arc::new(expr),
        text: is_text,
    })
}

impl ErrorDocument {
    /// The target for this request: an expression evaluated (an
    /// evaluation error gives an empty text, as Apache's), anything else
    /// as it is.
    pub fn resolve(&self, ctx: &Ctx<'_>, status: u16) -> ErrorDocument {
        let ErrorDocument::Expr { expr, text } = self else {
            return self.clone();
        };
        let out = expr.eval(&RequestExpr::with_status(ctx, status));
        let value = match out.value {
            Ok(v) => String::from_utf8_lossy(&v).into_owned(),
            Err(e) => {
                ctx.log_error(
                    "error",
                    "core",
                    &format!("Evaluation of expression in ErrorDocument failed: {e}"),
                );
                String::new()
            }
        };
        if *text {
            ErrorDocument::Text(value)
        } else if value.starts_with('/') {
            ErrorDocument::Local(value)
        } else {
            ErrorDocument::Remote(value)
        }
    }
}
