//! The HTML of the login page and of the error page shown when a request cannot be redirected back.

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;background:#f4f5f7;display:flex;justify-content:center;\
padding-top:10vh;margin:0}main{background:#fff;padding:2rem 2.5rem;border-radius:8px;box-shadow:0 1px 4px #0002;\
min-width:18rem}h1{font-size:1.25rem;margin-top:0}label{display:block;margin:.75rem 0 .25rem}\
input{width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1.25rem;width:100%;padding:.6rem;\
background:#1f5fbf;color:#fff;border:0;border-radius:4px;font-size:1rem}.error{color:#b00020}";

/// The login form. It posts back to the authorize URL with the original query kept (`action`).
pub fn login(
    company: &str,
    client_name: &str,
    action: &str,
    csrf: &str,
    username: &str,
    error: Option<&str>,
) -> String {
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width,initial-scale=1\"><title>Sign in - {company}</title><style>{STYLE}</style>\
         </head><body><main><h1>Sign in to {company}</h1><p>{client} is asking you to sign in.</p>{error}\
         <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
         <label for=\"username\">Username</label>\
         <input id=\"username\" name=\"username\" autocomplete=\"username\" value=\"{username}\" required autofocus>\
         <label for=\"password\">Password</label><input id=\"password\" name=\"password\" type=\"password\" \
         autocomplete=\"current-password\" required><button type=\"submit\">Sign in</button></form></main></body></html>",
        company = escape(company),
        client = escape(client_name),
        action = escape(action),
        csrf = escape(csrf),
        username = escape(username),
    )
}

/// A page for errors that must not be redirected (unknown client, unregistered redirect URI).
pub fn error(title: &str, message: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style>\
         </head><body><main><h1>{title}</h1><p class=\"error\">{message}</p></main></body></html>",
        title = escape(title),
        message = escape(message),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_escaped() {
        let html = super::login(
            "acme",
            "<script>",
            "/x?a=1&b=\"2\"",
            "t<k>",
            "o'neil",
            Some("<b>"),
        );
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("/x?a=1&amp;b=&quot;2&quot;"));
        assert!(html.contains("o&#39;neil"));
        assert!(!html.contains("<b>"));
    }
}
