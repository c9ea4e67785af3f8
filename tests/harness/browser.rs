//! A person with a browser, scripted: follows redirects, keeps each host's cookies, and
//! submits the form of each page it lands on (oidc-provider's development login gets the
//! person's name and any password; its consent page is confirmed) until a page has no form.
//! Every step is a real HTTP exchange with the servers involved; nothing is short-cut.

use std::collections::{BTreeMap, HashMap};

/// The page a walk ended on.
#[derive(Debug)]
pub struct Page {
    /// Its status.
    pub status: u16,
    /// Where it is.
    pub url: String,
    /// Its HTML.
    pub body: String,
    /// Every URL the walk went through, in order (redirects included).
    pub trail: Vec<String>,
}

impl Page {
    /// The page's text without tags (what a person reads), whitespace collapsed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        let body = self.body.split("</head>").last().unwrap_or(&self.body);
        for c in body.chars() {
            match c {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    out.push(' ');
                }
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        let out = out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"");
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A browser signed in as nobody yet; it signs in as `user` wherever it is asked to.
pub struct Browser {
    user: String,
    client: reqwest::Client,
    jar: HashMap<String, BTreeMap<String, String>>,
}

impl Browser {
    /// A fresh browser (no cookies) for `user`.
    pub fn new(user: &str) -> Self {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
        Self { user: user.to_owned(), client, jar: HashMap::new() }
    }

    /// Opens `url` and walks on (redirects, forms) until a page without a form.
    pub async fn open(&mut self, url: &str) -> Page {
        self.walk(url, |_| false).await
    }

    /// Walks from `url` until a page without a form, or until the next URL satisfies `stop`
    /// (that URL is then the page's, not fetched).
    pub async fn walk(&mut self, url: &str, stop: impl Fn(&str) -> bool) -> Page {
        self.go(url, None, true, stop).await
    }

    /// The value of cookie `name` this browser holds for `url`'s host.
    pub fn cookie(&self, url: &str, name: &str) -> Option<String> {
        let u = reqwest::Url::parse(url).ok()?;
        let host = format!("{}:{}", u.host_str().unwrap_or(""), u.port_or_known_default().unwrap_or(0));
        self.jar.get(&host)?.get(name).cloned()
    }

    /// Opens `url` and follows its redirects only: the page as it is, forms not submitted.
    pub async fn get(&mut self, url: &str) -> Page {
        self.go(url, None, false, |_| false).await
    }

    /// Submits the form of `page` whose HTML contains `needle` (as a person presses its
    /// button) and follows the redirects of the answer; forms on the way are not submitted.
    pub async fn submit(&mut self, page: &Page, needle: &str) -> Page {
        let (action, fields) = forms(&page.body)
            .into_iter()
            .find(|(html, _, _)| html.contains(needle))
            .map(|(_, action, fields)| (action, fields))
            .unwrap_or_else(|| panic!("no form with {needle} on {}", page.url));
        let url = reqwest::Url::parse(&page.url).unwrap().join(&action.replace("&amp;", "&")).unwrap();
        self.go(url.as_str(), Some(self.encode(fields)), false, |_| false).await
    }

    /// `fields` as a form body, the sign-in fields filled in as this person.
    fn encode(&self, fields: Vec<(String, String)>) -> String {
        let mut encoded = Vec::new();
        for (k, v) in fields {
            let v = match k.as_str() {
                "login" => self.user.clone(),
                "password" => "any".to_owned(),
                _ => v,
            };
            encoded.push(format!("{}={}", enc(&k), enc(&v)));
        }
        encoded.join("&")
    }

    async fn go(&mut self, url: &str, mut form: Option<String>, submit: bool, stop: impl Fn(&str) -> bool) -> Page {
        let mut next = reqwest::Url::parse(url).expect("an absolute URL");
        let mut trail = Vec::new();
        for _ in 0..30 {
            trail.push(next.to_string());
            if stop(next.as_str()) {
                return Page { status: 0, url: next.to_string(), body: String::new(), trail };
            }
            let host = format!("{}:{}", next.host_str().unwrap_or(""), next.port_or_known_default().unwrap_or(0));
            let cookies: Vec<String> =
                self.jar.get(&host).into_iter().flatten().map(|(k, v)| format!("{k}={v}")).collect();
            let mut req = match form.take() {
                Some(body) => self
                    .client
                    .post(next.clone())
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(body),
                None => self.client.get(next.clone()),
            };
            if !cookies.is_empty() {
                req = req.header("cookie", cookies.join("; "));
            }
            let res = req.send().await.unwrap_or_else(|e| panic!("the browser could not open {next}: {e}"));
            for c in res.headers().get_all("set-cookie") {
                let pair = c.to_str().unwrap_or("").split(';').next().unwrap_or("");
                if let Some((k, v)) = pair.split_once('=') {
                    self.jar.entry(host.clone()).or_default().insert(k.trim().to_owned(), v.to_owned());
                }
            }
            let status = res.status().as_u16();
            if (300..400).contains(&status) {
                let location = res.headers().get("location").expect("a redirect names where").to_str().unwrap();
                next = next.join(location).expect("a usable Location");
                continue;
            }
            let body = res.text().await.unwrap_or_default();
            let first = if submit { forms(&body).into_iter().next() } else { None };
            let Some((_, action, fields)) = first else {
                return Page { status, url: next.to_string(), body, trail };
            };
            form = Some(self.encode(fields));
            next = next.join(&action.replace("&amp;", "&")).expect("a usable form action");
        }
        panic!("more than 30 steps from {url}: {trail:?}");
    }
}

/// The forms of `html`, in order: each one's HTML, action, and named inputs with their values.
type Form<'h> = (&'h str, String, Vec<(String, String)>);

fn forms(html: &str) -> Vec<Form<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(start) = html[from..].find("<form").map(|i| from + i) {
        let end = html[start..].find("</form>").map_or(html.len(), |e| start + e);
        let form = &html[start..end];
        from = end;
        let Some(head_end) = form.find('>') else { break };
        let action = attribute(&form[..head_end], "action").unwrap_or_default();
        let mut fields = Vec::new();
        let mut rest = &form[head_end..];
        while let Some(i) = rest.find("<input") {
            let tag_end = rest[i..].find('>').map_or(rest.len(), |e| i + e);
            let tag = &rest[i..tag_end];
            if let Some(name) = attribute(tag, "name") {
                fields.push((name, attribute(tag, "value").unwrap_or_default()));
            }
            rest = &rest[tag_end..];
        }
        out.push((form, action, fields));
    }
    out
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let needle = format!(" {name}=\"");
    let i = tag.find(&needle)? + needle.len();
    let len = tag[i..].find('"')?;
    Some(tag[i..i + len].to_owned())
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}
