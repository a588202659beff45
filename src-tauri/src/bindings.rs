//! `ui/src/lib/bindings.ts`, the window's side of every command and event: the TypeScript types
//! of the commands' arguments and results and of the events' payloads (from the Rust types, with
//! ts-rs), a typed function per command (from the commands' signatures in the source) and a
//! typed listener per event (from the [`ShellEvent`] payloads). The test fails when the file in
//! the tree is not what the code gives, so a renamed field, argument or command fails the tests
//! instead of the window at run time.
//!
//! `MGDS_WRITE_BINDINGS=1 cargo test -p mgds-desktop bindings` writes the file instead, and
//! `npm run build` in `ui/` then checks the components against it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use ts_rs::{Config, TS, TypeVisitor};

use crate::analyses::{AnalysesPage, AnalysisQuery, BatchRun};
use crate::chart::{ChartControls, ChartView, SunburstControls, SunburstView};
use crate::compare::{CompareProgress, CompareRequest, ComparisonView, TaxonReadsProgress};
use crate::contamination::{ContaminationRequest, ContaminationView};
use crate::diversity::{DiversityRequest, DiversityScreen};
use crate::documents::{DocumentFile, DocumentTransfer, DocumentsView};
use crate::error::CmdError;
use crate::events::ShellEvent;
use crate::organization::{
    AuditPage, AuditQuery, LinkView, OrganizationView, UserChange, WebhookSecretView, WebhooksView,
};
use crate::projects::{Access, NewProject, ProjectChange, ProjectDetail, ProjectRow};
use crate::qc::{QcComparison, QcView};
use crate::report::{ComparisonReportRequest, ReportMade};
use crate::results::{AnalysesChanged, ClassificationView, HostCopy, PanelView, SampleContaminants};
use crate::samples::{
    BulkChange, BulkOutcome, JobArgs, Lookups, Named, SampleChange, SampleDetail, SampleQuery, SamplesPage, TagCount,
};
use crate::session::{ConnectionView, NewProfile, NewSsoProfile, ProfilesView};
use crate::uploads::{BrowserFile, FileCheck, UploadBatch, UploadProgress};
use crate::watching::{AlertsView, NewFolder, WatchChanged, WatchView};
use mgds_watch::LiveRun;

const BINDINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/lib/bindings.ts");
const REGENERATE: &str = "MGDS_WRITE_BINDINGS=1 cargo test -p mgds-desktop bindings";

/// Every module of the crate (lib.rs is checked against this list), read for its commands and
/// events.
const SOURCES: &[(&str, &str)] = &[
    ("chart", include_str!("chart.rs")),
    ("commands", include_str!("commands.rs")),
    ("dialogs", include_str!("dialogs.rs")),
    ("events", include_str!("events.rs")),
    ("session", include_str!("session.rs")),
    ("watching", include_str!("watching.rs")),
];
const LIB: &str = include_str!("lib.rs");

/// Every module of the application crate (its lib.rs is checked against this list), read for
/// its events.
const APP_SOURCES: &[(&str, &str)] = &[
    ("analyses", include_str!("../../crates/app/src/analyses.rs")),
    ("browser_uploads", include_str!("../../crates/app/src/browser_uploads.rs")),
    ("chart", include_str!("../../crates/app/src/chart.rs")),
    ("connection", include_str!("../../crates/app/src/connection.rs")),
    ("contamination", include_str!("../../crates/app/src/contamination.rs")),
    ("compare", include_str!("../../crates/app/src/compare.rs")),
    ("diversity", include_str!("../../crates/app/src/diversity.rs")),
    ("documents", include_str!("../../crates/app/src/documents.rs")),
    ("error", include_str!("../../crates/app/src/error.rs")),
    ("events", include_str!("../../crates/app/src/events.rs")),
    ("files", include_str!("../../crates/app/src/files.rs")),
    ("organization", include_str!("../../crates/app/src/organization.rs")),
    ("people", include_str!("../../crates/app/src/people.rs")),
    ("projects", include_str!("../../crates/app/src/projects.rs")),
    ("qc", include_str!("../../crates/app/src/qc.rs")),
    ("report", include_str!("../../crates/app/src/report.rs")),
    ("results", include_str!("../../crates/app/src/results.rs")),
    ("samples", include_str!("../../crates/app/src/samples.rs")),
    ("text", include_str!("../../crates/app/src/text.rs")),
    ("testing", include_str!("../../crates/app/src/testing.rs")),
    ("uploads", include_str!("../../crates/app/src/uploads.rs")),
];
const APP_LIB: &str = include_str!("../../crates/app/src/lib.rs");

/// The Rust types named in the commands' signatures (as they are spelled there), with what
/// they contain. `Vec`, `Option`, references and `CmdResult` around them are read from the
/// signatures.
fn signature_types(t: &mut Types) {
    macro_rules! named {
        ($($ty:ty),* $(,)?) => { $(t.named::<$ty>(stringify!($ty));)* };
    }
    named![
        bool,
        u32,
        u64,
        String,
        PathBuf,
        mgds_api::Role,
        serde_json::Value,
        serde_json::Map<String, serde_json::Value>,
        Access,
        AlertsView,
        AnalysesPage,
        AnalysisQuery,
        AuditPage,
        AuditQuery,
        BatchRun,
        BulkChange,
        BulkOutcome,
        ChartControls,
        ChartView,
        SunburstControls,
        SunburstView,
        QcView,
        QcComparison,
        ReportMade,
        ContaminationRequest,
        ContaminationView,
        ClassificationView,
        HostCopy,
        CompareRequest,
        ComparisonReportRequest,
        ComparisonView,
        ConnectionView,
        DiversityRequest,
        DiversityScreen,
        DocumentFile,
        DocumentsView,
        FileCheck,
        JobArgs,
        LinkView,
        Lookups,
        Named,
        NewFolder,
        NewProfile,
        NewSsoProfile,
        NewProject,
        OrganizationView,
        PanelView,
        SampleContaminants,
        ProfilesView,
        ProjectChange,
        ProjectDetail,
        ProjectRow,
        SampleChange,
        SampleDetail,
        SampleQuery,
        SamplesPage,
        TagCount,
        TaxonReadsProgress,
        UploadBatch,
        UserChange,
        WebhookSecretView,
        WebhooksView,
        LiveRun,
        WatchView,
    ];
}

/// The events, by their payloads.
fn events(t: &mut Types) {
    t.event::<AnalysesChanged>();
    t.event::<BatchRun>();
    t.event::<CompareProgress>();
    t.event::<TaxonReadsProgress>();
    t.event::<DocumentTransfer>();
    t.event::<UploadProgress>();
    t.event::<WatchChanged>();
}

/// What the generated file declares.
struct Types {
    cfg: Config,
    /// The TypeScript name of each type named in a signature, by its spelling without spaces.
    named: HashMap<String, String>,
    /// The spellings a signature used.
    used: BTreeSet<String>,
    /// Every type declared, by TypeScript name.
    decls: BTreeMap<String, String>,
    /// The events: name, payload type's TypeScript name and Rust name.
    events: Vec<(&'static str, String, &'static str)>,
}

impl TypeVisitor for Types {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only declared types (not `Vec`, `Option`, `string`, ...) have an output path.
        if T::output_path().is_none() {
            return;
        }
        let name = T::ident(&self.cfg);
        let decl = tidy(&format!("{}export {}", T::docs().unwrap_or_default(), T::decl(&self.cfg)));
        // One declaration may stand for several Rust types (`serde_json::Value` is ts-rs's `JsonValue`).
        if let Some(seen) = self.decls.get(&name) {
            assert!(
                *seen == decl,
                "two Rust types are `{name}` in TypeScript: give one another name with #[ts(rename = \"...\")]"
            );
            return;
        }
        self.decls.insert(name, decl);
        T::visit_dependencies(self);
    }
}

impl Types {
    fn new() -> Types {
        Types {
            // The window's numbers are JavaScript numbers: counts and byte sizes stay well below 2^53.
            cfg: Config::new().with_large_int("number"),
            named: HashMap::new(),
            used: BTreeSet::new(),
            decls: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    /// Declares `T` and what it contains.
    fn declare<T: TS + 'static + ?Sized>(&mut self) {
        self.visit::<T>();
        T::visit_generics(self);
    }

    fn named<T: TS + 'static + ?Sized>(&mut self, spelling: &str) {
        self.named.insert(no_spaces(spelling), T::name(&self.cfg));
        self.declare::<T>();
    }

    fn event<E: ShellEvent>(&mut self) {
        let rust = std::any::type_name::<E>().rsplit("::").next().unwrap_or_default();
        self.events.push((E::NAME, E::name(&self.cfg), rust));
        self.declare::<E>();
    }

    /// The TypeScript of a Rust type in a signature of command `cmd`.
    fn ts(&mut self, cmd: &str, ty: &str) -> String {
        let ty = ty.trim();
        if let Some(referent) = ty.strip_prefix('&') {
            let referent = referent.trim_start();
            // A lifetime (`&'static str`) or `mut` before the referent type.
            let referent = match referent.strip_prefix('\'') {
                Some(rest) => rest.split_once(char::is_whitespace).map_or("", |(_, t)| t),
                None => referent,
            };
            return self.ts(cmd, referent.trim_start().strip_prefix("mut ").unwrap_or(referent));
        }
        let key = no_spaces(ty);
        if let Some(name) = self.named.get(&key) {
            self.used.insert(key);
            return name.clone();
        }
        if let Some(inner) = generic_arg(&key, &["Vec", "std::vec::Vec"]) {
            let inner = self.ts(cmd, inner);
            return if inner.contains(' ') { format!("({inner})[]") } else { format!("{inner}[]") };
        }
        if let Some(inner) = generic_arg(&key, &["Option", "std::option::Option"]) {
            return format!("{} | null", self.ts(cmd, inner));
        }
        panic!(
            "command `{cmd}`: `{ty}` has no TypeScript type here; add it to `signature_types` in \
             src-tauri/src/bindings.rs (it must derive ts_rs::TS)"
        )
    }

    /// The TypeScript of command `cmd`'s result, from its Rust return type.
    fn result(&mut self, cmd: &str, ret: Option<&str>) -> String {
        let Some(ret) = ret.map(no_spaces) else { return "void".into() };
        let ok = match generic_arg(&ret, &["CmdResult", "crate::error::CmdResult"]) {
            Some(ok) => ok.to_string(),
            None => match generic_arg(&ret, &["Result"]) {
                Some(args) => split_top_level(args).first().cloned().unwrap_or_default(),
                None => ret.clone(),
            },
        };
        if ok == "()" { "void".into() } else { self.ts(cmd, &ok) }
    }
}

/// A ts-rs declaration laid out for reading: one field per line, indented, and one-line doc
/// comments on one line.
fn tidy(decl: &str) -> String {
    let mut lines = Vec::new();
    let mut in_object = false;
    for line in decl.lines().map(str::trim_end) {
        if !in_object {
            in_object = line.starts_with("export type ") && line.ends_with('{');
            lines.push(line.to_string());
        } else if let Some(last) = line.strip_suffix(" };") {
            lines.push(format!("  {last}"));
            lines.push("};".to_string());
            in_object = false;
        } else {
            lines.push(format!("  {line}"));
        }
    }
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let one_line_doc = lines[i].trim() == "/**"
            && lines.get(i + 2).is_some_and(|l| l.trim() == "*/")
            && lines[i + 1].trim_start().starts_with("* ");
        if one_line_doc {
            let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
            let text = lines[i + 1].trim_start().trim_start_matches("* ");
            out.push_str(&format!("{indent}/** {text} */\n"));
            i += 3;
        } else {
            out.push_str(&lines[i]);
            out.push('\n');
            i += 1;
        }
    }
    out.trim_end().to_string()
}

fn no_spaces(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `T` of `Name<T>` (spaces removed) for any of `names`.
fn generic_arg<'a>(ty: &'a str, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| ty.strip_prefix(n)?.strip_prefix('<')?.strip_suffix('>'))
}

/// Splits at the commas outside brackets.
fn split_top_level(s: &str) -> Vec<String> {
    let (mut parts, mut current, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    for (i, word) in snake.split('_').filter(|w| !w.is_empty()).enumerate() {
        let mut chars = word.chars();
        if i > 0
            && let Some(first) = chars.next()
        {
            out.extend(first.to_uppercase());
        }
        out.push_str(chars.as_str());
    }
    out
}

/// A `#[tauri::command]` as its source declares it.
#[derive(Debug)]
struct Command {
    module: &'static str,
    name: String,
    docs: Vec<String>,
    /// The arguments the window passes (not those Tauri injects), with their Rust types.
    args: Vec<(String, String)>,
    ret: Option<String>,
}

/// Arguments Tauri fills in itself.
fn injected(ty: &str) -> bool {
    let ty = no_spaces(ty);
    let ty = ty.strip_prefix("tauri::").unwrap_or(&ty);
    ty.starts_with("State<") || ["AppHandle", "Window", "WebviewWindow", "Webview"].contains(&ty)
}

/// The commands of one module. Reads the fn headers of our rustfmt-formatted source: a command
/// is a top-level `#[tauri::command]` fn without generics.
fn commands_in(module: &'static str, src: &str) -> Vec<Command> {
    const ATTR: &str = "\n#[tauri::command";
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = src[at..].find(ATTR).map(|i| at + i + 1) {
        let docs: Vec<String> = src[..i]
            .lines()
            .rev()
            .map_while(|l| l.trim_start().strip_prefix("///"))
            .map(|l| l.strip_prefix(' ').unwrap_or(l).to_string())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let rest = src[i..].strip_prefix("#[tauri::command]\n").unwrap_or_else(|| {
            panic!("{module}.rs: only a plain `#[tauri::command]` is read here (no `rename_all` or other options)")
        });
        let header = rest.trim_start_matches("pub ").trim_start_matches("async ");
        let header = header.strip_prefix("fn ").unwrap_or_else(|| {
            let start: String = rest.chars().take(60).collect();
            panic!("{module}.rs: `#[tauri::command]` must be followed by `pub (async) fn`: {start}")
        });
        let open = header.find('(').expect("a fn has arguments");
        let name = header[..open].to_string();
        assert!(!name.contains('<'), "{module}.rs: command `{name}` is generic, which is not read here");
        // The argument list ends at its matching parenthesis.
        let mut depth = 0;
        let close = header[open..]
            .char_indices()
            .find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(open + j)
            })
            .expect("a fn's arguments end");
        let mut args = Vec::new();
        for arg in split_top_level(&header[open + 1..close]) {
            let (pat, ty) = arg.split_once(':').unwrap_or_else(|| panic!("{module}.rs: `{arg}` of `{name}`"));
            let pat = pat.trim().trim_start_matches("mut ").trim();
            if !injected(ty) {
                args.push((pat.to_string(), ty.trim().to_string()));
            }
        }
        let after = &header[close + 1..];
        let body = after.find('{').expect("a fn has a body");
        let ret = after[..body].trim().strip_prefix("->").map(|r| r.trim().to_string());
        assert!(
            !ret.as_deref().unwrap_or_default().contains("where"),
            "{module}.rs: command `{name}` has a where clause, which is not read here"
        );
        out.push(Command { module, name, docs, args, ret });
        at = i + 1;
    }
    out
}

/// The commands registered with `tauri::generate_handler!` in lib.rs, as `module::name`.
fn registered() -> BTreeSet<String> {
    let start = LIB.find("generate_handler![").expect("lib.rs registers the commands") + "generate_handler![".len();
    let end = start + LIB[start..].find(']').expect("the handler list ends");
    split_top_level(&LIB[start..end]).into_iter().collect()
}

/// The modules `lib` declares, the bindings' own apart.
fn modules(lib: &'static str) -> BTreeSet<&'static str> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod ")))
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| *m != "bindings")
        .collect()
}

fn doc_comment(docs: &[String], indent: &str) -> String {
    if docs.is_empty() {
        return String::new();
    }
    let mut out = format!("{indent}/**\n");
    for line in docs {
        let line = line.replace("*/", "* /");
        if line.is_empty() {
            out.push_str(&format!("{indent} *\n"));
        } else {
            out.push_str(&format!("{indent} * {line}\n"));
        }
    }
    out.push_str(&format!("{indent} */\n"));
    out
}

/// The text of `ui/src/lib/bindings.ts`.
fn generate() -> String {
    let mut t = Types::new();
    signature_types(&mut t);
    events(&mut t);
    t.declare::<CmdError>();
    // What a browser sends in place of a file's path for checking (`check_browser_files`).
    t.declare::<BrowserFile>();
    // A browser's uploads (`begin_browser_upload` and the steps after it).
    t.declare::<mgds_app::browser_uploads::BrowserUploadRequest>();
    t.declare::<mgds_app::browser_uploads::BrowserUpload>();
    t.declare::<mgds_app::browser_uploads::UploadMade>();

    let mut commands: Vec<Command> = SOURCES.iter().flat_map(|(m, src)| commands_in(m, src)).collect();
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    let mut table = String::new();
    for c in &commands {
        let params: Vec<(String, String)> =
            c.args.iter().map(|(name, ty)| (camel_case(name), t.ts(&c.name, ty))).collect();
        let result = t.result(&c.name, c.ret.as_deref());
        let signature = params.iter().map(|(n, ty)| format!("{n}: {ty}")).collect::<Vec<_>>().join(", ");
        let call = if params.is_empty() {
            format!("invoke<{result}>(\"{}\")", c.name)
        } else {
            let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
            format!("invoke<{result}>(\"{}\", {{ {} }})", c.name, names.join(", "))
        };
        table.push_str(&doc_comment(&c.docs, "  "));
        table.push_str(&format!("  {}: ({signature}): Promise<{result}> =>\n    {call},\n", camel_case(&c.name)));
    }

    let unused: Vec<&String> = t.named.keys().filter(|k| !t.used.contains(*k)).collect();
    assert!(unused.is_empty(), "no command names {unused:?}: take them out of `signature_types` in bindings.rs");

    let mut out = String::new();
    out.push_str(&format!(
        "// The shell's commands and events, and the types they carry: generated from the Rust code in\n\
         // src-tauri by its `bindings` test. Do not edit; after changing those Rust types or commands, run\n\
         //   {REGENERATE}\n\
         // (`cargo test` fails while this file is out of date).\n\n"
    ));
    out.push_str("import { invoke, listen, type UnlistenFn } from \"./transport\";\n");
    for decl in t.decls.values() {
        out.push('\n');
        out.push_str(decl);
        out.push('\n');
    }
    out.push_str(
        "\n/** The shell's commands: each resolves to its result, or rejects with a `CmdError`. */\n\
         export const commands = {\n",
    );
    out.push_str(&table);
    out.push_str("};\n");

    let mut events = t.events.clone();
    events.sort();
    out.push_str(
        "\n/** The events the shell sends to the window, by name, with their payloads. */\nexport type Events = {\n",
    );
    for (name, payload, _) in &events {
        out.push_str(&format!("  \"{name}\": {payload};\n"));
    }
    out.push_str(
        "};\n\n/** Listeners for the shell's events: each resolves to the function that stops listening. */\n",
    );
    out.push_str("export const events = {\n");
    for (name, payload, _) in &events {
        out.push_str(&format!(
            "  {}: (f: (payload: {payload}) => void): Promise<UnlistenFn> =>\n    listen<{payload}>(\"{name}\", (e) => f(e.payload)),\n",
            camel_case(&name.replace('-', "_"))
        ));
    }
    out.push_str("};\n");
    out
}

#[test]
fn ui_bindings_are_current() {
    let text = generate();
    if std::env::var_os("MGDS_WRITE_BINDINGS").is_some() {
        std::fs::write(BINDINGS, &text).unwrap_or_else(|e| panic!("could not write {BINDINGS}: {e}"));
        return;
    }
    let current = std::fs::read_to_string(BINDINGS).unwrap_or_default().replace("\r\n", "\n");
    if current != text {
        let line = current.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0) + 1;
        panic!(
            "ui/src/lib/bindings.ts is not what the Rust types and commands give (first difference at line \
             {line}); regenerate it with\n  {REGENERATE}\nand commit it with the change"
        );
    }
}

#[test]
fn every_command_is_registered_and_every_registered_command_is_read() {
    let read: BTreeSet<&str> = SOURCES.iter().map(|(m, _)| *m).collect();
    assert_eq!(modules(LIB), read, "bindings.rs must read every module lib.rs declares (SOURCES)");
    let read: BTreeSet<&str> = APP_SOURCES.iter().map(|(m, _)| *m).collect();
    assert_eq!(modules(APP_LIB), read, "bindings.rs must read every module of mgds-app (APP_SOURCES)");
    let commands: BTreeSet<String> =
        SOURCES.iter().flat_map(|(m, src)| commands_in(m, src)).map(|c| format!("{}::{}", c.module, c.name)).collect();
    let registered = registered();
    let missing: Vec<&String> = commands.difference(&registered).collect();
    let unknown: Vec<&String> = registered.difference(&commands).collect();
    assert!(missing.is_empty(), "commands not in lib.rs's generate_handler!: {missing:?}");
    assert!(unknown.is_empty(), "generate_handler! lists commands that are not read from the source: {unknown:?}");
}

#[test]
fn every_event_goes_through_a_typed_payload() {
    let mut t = Types::new();
    events(&mut t);
    let listed: BTreeSet<&str> = t.events.iter().map(|(_, _, rust)| *rust).collect();
    let mut implemented = BTreeSet::new();
    for (module, src) in SOURCES.iter().chain(APP_SOURCES) {
        for line in src.lines() {
            if let Some(rest) = line.strip_prefix("impl crate::events::ShellEvent for ") {
                implemented.insert(rest.trim_end_matches(" {"));
            }
        }
        // `events::emit` pairs each name with its payload type; a bare `emit` would not.
        assert!(*module == "events" || !src.contains(".emit"), "{module}.rs sends an event without events::emit");
    }
    assert_eq!(listed, implemented, "bindings.rs's `events` must list every ShellEvent payload");
    let names: BTreeSet<&str> = t.events.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(names.len(), t.events.len(), "two payloads share an event name");
}

/// The parser reads what it must from a header of each shape the commands use.
#[test]
fn command_headers_are_read() {
    let src = "\n/// Does it.\n/// Twice.\n#[tauri::command]\npub async fn do_it(\n    app: AppHandle,\n    \
               s: State<'_, Session>,\n    file_name: String,\n    pairs: Vec<(String, u64)>,\n) -> CmdResult<Option<Vec<Named>>> {\n}\n\
               \n#[tauri::command]\npub fn plain(mut on: bool) {}\n";
    let c = commands_in("m", src);
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].name.as_str(), c[0].docs.clone()), ("do_it", vec!["Does it.".to_string(), "Twice.".to_string()]));
    assert_eq!(c[0].args, [("file_name".into(), "String".into()), ("pairs".into(), "Vec<(String, u64)>".into())]);
    assert_eq!(c[0].ret.as_deref(), Some("CmdResult<Option<Vec<Named>>>"));
    assert_eq!((c[1].args.clone(), c[1].ret.clone()), (vec![("on".into(), "bool".into())], None));
    let mut t = Types::new();
    signature_types(&mut t);
    assert_eq!(t.result("do_it", c[0].ret.as_deref()), "Named[] | null");
    assert_eq!(t.result("plain", None), "void");
    assert_eq!(t.ts("x", "Vec<Option<u64>>"), "(number | null)[]");
    assert_eq!(t.ts("x", "&'a mut Named"), "Named");
    assert_eq!(camel_case("file_name"), "fileName");
}
