//! The page's files, embedded in the binary: nothing to install, nothing fetched.

/// A file of the page: its path, type and contents.
pub(crate) struct Asset {
    pub path: &'static str,
    pub mime: &'static str,
    pub body: &'static str,
}

/// A JavaScript module of the page.
const fn module(path: &'static str, body: &'static str) -> Asset {
    Asset {
        path,
        mime: "text/javascript; charset=utf-8",
        body,
    }
}

/// Every file the page loads.
pub(crate) const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        mime: "text/html; charset=utf-8",
        body: include_str!("../assets/index.html"),
    },
    Asset {
        path: "/assets/style.css",
        mime: "text/css; charset=utf-8",
        body: include_str!("../assets/style.css"),
    },
    module("/assets/app.js", include_str!("../assets/app.js")),
    module("/assets/render.js", include_str!("../assets/render.js")),
    module("/assets/forms.js", include_str!("../assets/forms.js")),
    module("/assets/apps.js", include_str!("../assets/apps.js")),
];

/// The policy of the page itself: its own files only, images and sounds of results
/// (`data:`), frames of its own (apps), and no one may frame it.
pub(crate) const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; media-src 'self' data:; connect-src 'self'; frame-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
