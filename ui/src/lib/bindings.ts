// The shell's commands and events, and the types they carry: generated from the Rust code in
// src-tauri by its `bindings` test. Do not edit; after changing those Rust types or commands, run
//   MGDS_WRITE_BINDINGS=1 cargo test -p mgds-desktop bindings
// (`cargo test` fails while this file is out of date).

import { invoke, listen, type UnlistenFn } from "./transport";

/** What a new member may do. */
export type Access = "full" | "view";

/** An alert as recorded and reported: a sample (or a run's barcode) crossed a rule. */
export type Alert = {
  /**
   * The sample (its id on the service), or the run barcode (`run:` then the run id and
   * the barcode) the alert is about.
   */
  subject: string,
  /** Said for a person: the sample's name, or the run id and barcode. */
  label: string,
  /** The sample's id on the service; none for a run barcode's alert. */
  sample_id: string | null,
  /** The run id, for a sample of a run or a run barcode. */
  run_id: string | null,
  /** The rule, as written. */
  rule: string,
  /** The taxon's id. */
  tax_id: string,
  /** Its name. */
  taxon: string,
  /** Its reads. */
  reads: number,
  /** Its share of all the reads, in percent. */
  percent: number,
  /** When it fired (RFC 3339). */
  at: string,
};

/** The taxon alerts. */
export type AlertsView = {
  /**
   * The rules for every watched folder and every file uploaded from the window, as written
   * (`Salmonella enterica >= 0.1%`).
   */
  rules: Array<string>,
  /** The alerts that fired, newest first (at most 500). */
  fired: Array<Alert>,
};

/** One alpha diversity measure over the samples. */
export type AlphaColumn = {
  /** `observed_taxa`, `shannon`, `simpson`, `chao1`. */
  metric: string,
  /** Its name on a chart. */
  label: string,
  /** How it is computed. */
  explanation: string,
  /** One value per sample (none where undefined: a sample with no reads at the rank). */
  values: Array<number | null>,
  /** The rank test between the groups, when samples are grouped and a test can be made. */
  test: TestView | null,
};

/** The analyses of one sample, as sent in `analyses-changed` events. */
export type AnalysesChanged = {
  /** The sample. */
  sample_id: string,
  /** Its analyses. */
  analyses: Array<AnalysisRow>,
};

/** One page of the Analyses table. */
export type AnalysesPage = {
  /** The rows. */
  rows: Array<AnalysisListRow>,
  /** Analyses matching the filters on all pages. */
  total: number,
  /** This page's number. */
  page: number,
  /** Rows per page. */
  per_page: number,
};

/** One row of the Analyses table. */
export type AnalysisListRow = {
  /** Analysis id. */
  id: string,
  /** `classification`, `panel`, ... */
  kind: string,
  /** Where it stands. */
  state: AnalysisState,
  /** Why it failed, in the service's words. */
  error: string | null,
  /** When it was started (RFC 3339). */
  created_at: string,
  /** When it finished (RFC 3339), once it has. */
  finished_at: string | null,
  /** The job's id. */
  job: string,
  /** The job's name. */
  job_name: string,
  /** The sample's id. */
  sample: string,
  /** The sample's file name. */
  sample_name: string | null,
  /** The note given when it was run. */
  description: string | null,
  /** The taxon whose genome an alignment is to. */
  tax_id: string | null,
};

/** The Analyses table's state as the window sends it. */
export type AnalysisQuery = {
  /** Page number, from 1. */
  page: number,
  /** Rows per page. */
  per_page: number,
  /** Column to sort by: `created_at` (started), `updated_at` (finished), `kind`, `status`. */
  sort?: string | null,
  /** Descending order. */
  desc?: boolean,
  /** Only analyses in this state. */
  status?: AnalysisState | null,
  /** Only analyses of this job (id). */
  job?: string | null,
};

/** One analysis of a sample, for the sample page. */
export type AnalysisRow = {
  /** Analysis id. */
  id: string,
  /** `classification`, `panel`, ... */
  kind: string,
  /** Where it stands. */
  state: AnalysisState,
  /** Why it failed. */
  error: string | null,
  /** When it was created. */
  created_at: string,
  /** The job's id. */
  job: string,
  /** The taxon whose genome an alignment is to. */
  tax_id: string | null,
  /** The note given when it was run. */
  description: string | null,
};

/** Where an analysis stands. */
export type AnalysisState = "running" | "complete" | "failed";

/** A page of the audit trail. */
export type AuditPage = {
  /** The entries, newest first. */
  rows: Array<AuditRow>,
  /** How many entries the filters keep. */
  total: number,
  /** The page shown. */
  page: number,
  /** Entries per page. */
  per_page: number,
};

/** What the audit screen asks for: a page, and filters. */
export type AuditQuery = {
  /** Page, from 1. */
  page?: number | null,
  /** Actions starting with this (`sample.`, `user.disabled`). */
  action?: string | null,
  /** Done by this e-mail address. */
  by?: string | null,
  /** On or after this day (`YYYY-MM-DD`). */
  since?: string | null,
};

/** One entry as the screen shows it. */
export type AuditRow = {
  /** When. */
  at: string,
  /** Its number in the chain (`None` for the few seconds before it is chained). */
  seq: number | null,
  /** Who (`None`: the operator, on the service's machine). */
  by: string | null,
  /** From which address. */
  address: string | null,
  /** With which client. */
  client: string | null,
  /** What happened. */
  action: string,
  /** The kind of record and its id. */
  target: string,
  /** What changed, in words: `description: "ward 3" → "ward 4"`. */
  changes: Array<string>,
};

/** One bar, for the UI. */
export type BarView = {
  /** Taxon name, or "Other (N taxa)". */
  label: string,
  /** Tax id (none for "Other"). */
  tax_id: string | null,
  /** Percent or reads. */
  value: number,
};

/** One sample of a run on many. */
export type BatchItem = {
  /** The sample's id. */
  sample: string,
  /** Its file name. */
  sample_name: string | null,
  /** The analysis, once started. */
  analysis: string | null,
  /** Where it stands. */
  state: AnalysisState,
  /** Why it failed (or could not start), in the service's words. */
  error: string | null,
};

/**
 * One job run on many samples, sent in `batch-changed` events as it goes (and sent back by a
 * browser, which asks how it stands).
 */
export type BatchRun = {
  /** The window's id for the run. */
  id: string,
  /** The job's id. */
  job: string,
  /** The job's name. */
  job_name: string,
  /** One per sample. */
  items: Array<BatchItem>,
};

/**
 * A file a browser was given, described by what the browser read of it: its first bytes and,
 * once decompressed where the browser can (gzip), its first line. The browser does not send
 * the file for checking; the service checks every read once the file is uploaded.
 */
export type BrowserFile = {
  /** Its path as the browser gives it: the file's name, under the folders dropped or picked. */
  path: string,
  /** Its size in bytes. */
  size: number,
  /** Its first bytes (at most [`MAX_MAGIC`] are looked at): the compression. */
  magic: Array<number>,
  /** Its first line, decompressed (at most [`MAX_FIRST_LINE`] characters are looked at). */
  first_line?: string | null,
  /** Why the browser could not read its start (a gzip stream that does not open). */
  unreadable?: string | null,
  /**
   * Found in a folder the user gave (not named by them): left out unless its name is a
   * sequence file's and it is not hidden, as in a folder given to the desktop.
   */
  from_folder?: boolean,
};

/** A started upload as the browser keeps it (and sends it back with each step). */
export type BrowserUpload = {
  /** A sample's reads or a document. */
  kind: UploadKind,
  /**
   * The service's answer to `init_multipart_upload` (with the upload's credentials, which
   * sign its parts' addresses; they write this upload's files and nothing else).
   */
  init: unknown,
  /** One per file: read 1 (or the document), then read 2 of a pair. */
  files: Array<UploadObject>,
  /**
   * Whether parts should be sent one after another: the service's own store writes parts
   * that arrive in order straight into the file, and others twice.
   */
  in_order: boolean,
};

/** What a browser asks to upload. */
export type BrowserUploadRequest = {
  /** A sample's reads or a document. */
  kind: UploadKind,
  /** The file's name (read 1's, for a pair). */
  name: string,
  /** Its size in bytes. */
  size: number,
  /** Read 2's file, for a pair joined into one sample. */
  mate?: MateFile | null,
  /** Tag names for a sample. */
  tags?: Array<string>,
  /** A project id for a sample. */
  project?: string | null,
  /** Metadata for a sample. */
  metadata?: MetadataInput | null,
};

/** A change to many samples at once, from the samples table's selection. */
export type BulkChange = {
  /** Tag ids to add (the samples keep their other tags). */
  add_tags?: Array<string>,
  /** Names of new tags to create and add. */
  new_tags?: Array<string>,
  /** Tag ids to take off. */
  remove_tags?: Array<string>,
  /** New project id; an empty string takes them out of their project. */
  project?: string | null,
  /** New visibility. */
  visibility?: Visibility | null,
  /** Delete the samples instead. */
  delete?: boolean,
};

/** One sample a bulk change could not change. */
export type BulkFailure = {
  /** The sample. */
  id: string,
  /** Why, in words. */
  message: string,
};

/** What a bulk change did: the samples changed, and those that could not be, with why. */
export type BulkOutcome = {
  /** Samples changed (or deleted). */
  done: number,
  /** Samples not changed, with the service's reason. */
  failed: Array<BulkFailure>,
};

/** The chart controls as the UI sends them. */
export type ChartControls = {
  /** Rank of the bars. */
  rank: string,
  /** Taxa with their own bar; the rest become "Other". */
  top_n: number,
  /**
   * `reestimated`, `genome_copies`, `bases_genome_copies`, `read_share` (see
   * `mgds_api::Measure`) or `readcount`.
   */
  metric: string,
  /** Keep the host's taxa (left out by default, as the `onecodex` library leaves them out). */
  show_host: boolean,
  /**
   * Taxa called possible contaminants by a controls analysis of the sample's batch: marked
   * on their bars (at most [`crate::compare::MAX_FLAGGED`] are read).
   */
  flagged: Array<string>,
  /** Leave the flagged taxa out. */
  hide_flagged: boolean,
};

/** A chart for the UI: the SVG to show inline, and its bars. */
export type ChartView = {
  /** The SVG document. */
  svg: string,
  /** The bars, top to bottom. */
  bars: Array<BarView>,
};

/** A classification's table, for the taxa table. */
export type ClassificationView = {
  /** Reads in the sample. */
  n_reads: number,
  /** One row per taxon. */
  table: Array<TaxonRow>,
  /** Median read length, where the service gives it. */
  median_read_length: number | null,
  /**
   * The measure shown first ([`mgds_api::Measure::default_for`]: for long reads, genome copies
   * by bases), by its key.
   */
  default_measure: string,
  /**
   * The host's taxa in the table (those the database names as host and those below them),
   * which the page leaves out unless asked.
   */
  host: Array<string>,
  /**
   * Reads counted for the host's taxa (a copy without the host's reads also removes those
   * the confidence filter held back).
   */
  host_reads: number,
};

/** An error crossing to the UI. */
export type CmdError = {
  /** A stable, machine-readable code the UI can branch on (`key_refused`, `unreachable`, ...). */
  code: string,
  /** What went wrong and what to do, for a person. */
  message: string,
};

/** Fetching progress, as `compare-progress` events. */
export type CompareProgress = {
  /** Samples looked at. */
  done: number,
  /** Samples in all. */
  total: number,
};

/** What the comparison view asks for. */
export type CompareRequest = {
  /** The samples (ids), 2 to 500, in the order given. */
  samples: Array<string>,
  /** The rank compared: `species`, `genus`, ... */
  rank: string,
  /** Taxa with a column of their own (1 to 50); the rest are summed into "Other". */
  top: number,
  /**
   * `reestimated`, `genome_copies`, `read_share` or `readcount`; none: the best measure every
   * sample has ([`mgds_plots::default_metric`]).
   */
  measure?: string | null,
  /** `bars` (stacked bars) or `heatmap`. */
  chart: string,
  /** Heatmap only: cluster samples and taxa ([`mgds_plots::CLUSTERING`]). */
  cluster: boolean,
  /** Label samples by this metadata field (none: by file name). */
  label?: string | null,
  /** Order samples by this metadata field (none: as given; ignored when clustering). */
  order_by?: string | null,
  /** Keep the host's reads. */
  show_host: boolean,
  /** A column for the unclassified reads (reads and the share of reads only). */
  show_unclassified: boolean,
  /**
   * Taxa (tax ids) marked as possible contaminants by the controls tab
   * (`crate::contamination`): named so on the chart and in the numbers, at most
   * [`MAX_FLAGGED`].
   */
  flagged: Array<string>,
  /** Leave the flagged taxa out. */
  hide_flagged: boolean,
};

/** A column of the comparison: a taxon, "Other" or the unclassified reads. */
export type ComparedColumn = {
  /** Its name on the chart. */
  label: string,
  /** The taxon's id (none for "Other" and the unclassified reads). */
  tax_id: string | null,
};

/** A compared sample, in the order drawn. */
export type ComparedSample = {
  /** Its id. */
  id: string,
  /** Its label on the chart. */
  label: string,
};

/** What a comparison report is of, and how. */
export type ComparisonReportRequest = {
  /** The samples (ids), 2 to 500, in the order given. */
  samples: Array<string>,
  /** The rank: `species`, `genus`, ... */
  rank: string,
  /** Taxa with a column of their own (1 to 30); the rest are summed into "Other". */
  top: number,
  /** The measure compared (as the comparison's); none: the best measure every sample has. */
  measure?: string | null,
  /** The beta diversity (as the diversity view's); none: Bray–Curtis. */
  metric?: string | null,
  /** Group samples by this metadata field for the tests and the points' colours. */
  group_by?: string | null,
  /** Label samples by this metadata field (none: by name). */
  label?: string | null,
  /** PERMANOVA's permutations (default 999). */
  permutations?: number | null,
  /** The permutations' seed (default 42). */
  seed: number | null,
  /** Keep the host's reads (default: left out). */
  show_host: boolean,
  /** The report's title (none: "Comparison of N samples"). */
  title?: string | null,
};

/** The comparison view. */
export type ComparisonView = {
  /**
   * The chart (stacked bars or heatmap) as SVG, the same picture the exports write: every
   * bar segment or cell a `<rect>` with `data-sample` (the row, in `samples`), `data-tax-id`
   * for a taxon, and a `<title>` naming sample, taxon and value.
   */
  svg: string,
  /** The samples, in the order drawn. */
  samples: Array<ComparedSample>,
  /** The columns, in the order drawn. */
  columns: Array<ComparedColumn>,
  /** `values[sample][column]`: percent for a measure, reads for `readcount`. */
  values: Array<Array<number>>,
  /** `reads[sample][column]`: reads of the taxon and below. */
  reads: number[][],
  /** The rank compared. */
  rank: string,
  /** The measure shown (a key of `measures`). */
  measure: string,
  /** The measures every compared sample has, and reads. */
  measures: Array<MeasureChoice>,
  /** What the chart leaves out or shows, in words ("host reads hidden", ...). */
  notes: Array<string>,
  /** How the heatmap was clustered, when it was. */
  clustering: string | null,
  /** The metadata fields the samples have, for labels and ordering. */
  fields: Array<string>,
  /** Samples left out, with why. */
  skipped: Array<SkippedSample>,
};

/** What the screens show about the connection. */
export type ConnectionView = {
  /** The profile's name. */
  profile: string,
  /** The service's base address. */
  base_url: string,
  /** Whether this is the embedded local service. */
  local: boolean,
  /** The signed-in user's e-mail address. */
  email: string | null,
  /** The local service's data folder (the desktop's embedded service; empty elsewhere). */
  data_dir: string,
};

/** One taxon's scores. */
export type ContaminantRow = {
  /** Its tax id. */
  tax_id: string,
  /** Its name. */
  name: string,
  /** The score the call is made on (absent where it could not be made). */
  score: number | null,
  /** The prevalence score. */
  prevalence: number | null,
  /** The frequency score. */
  frequency: number | null,
  /** Called a contaminant (score below the threshold). */
  contaminant: boolean,
  /** Controls it is present in. */
  in_controls: number,
  /** True samples it is present in. */
  in_samples: number,
  /** Its mean share of the reads of the controls. */
  mean_share_controls: number,
  /** Its mean share of the reads of the true samples. */
  mean_share_samples: number,
};

/** What the contaminants view asks for. */
export type ContaminationRequest = {
  /** The samples, controls among them. */
  samples: Array<string>,
  /** The rank to score taxa at. */
  rank: string,
  /**
   * `prevalence`, `frequency` or `combined`; `None`: combined where every true sample has a
   * concentration, else prevalence.
   */
  method: string | null,
  /** The threshold (default decontam's 0.1). */
  threshold: number | null,
  /** The field holding DNA concentration (default [`CONCENTRATION_FIELD`]). */
  concentration_field: string | null,
  /** A field whose values are batches. */
  batch_by: string | null,
  /** Count the host's taxa too. */
  show_host: boolean,
};

/** A sample as the view names it. */
export type ContaminationSample = {
  /** Its id. */
  id: string,
  /** Its name. */
  name: string,
  /** Its batch, when batches were asked for. */
  batch: string | null,
};

/** The contaminants view. */
export type ContaminationView = {
  /** The method's key (`prevalence`, `frequency`, `combined`). */
  method: string,
  /** The method in words. */
  method_label: string,
  /** The threshold. */
  threshold: number,
  /** The rank. */
  rank: string,
  /** The negative controls. */
  controls: Array<ContaminationSample>,
  /** The true samples. */
  samples: Array<ContaminationSample>,
  /** Taxa by score, lowest first (those without a score last), at most [`MAX_ROWS`]. */
  rows: Array<ContaminantRow>,
  /** Taxa scored in all. */
  taxa: number,
  /** Taxa called contaminants. */
  flagged: number,
  /** Samples left out, with why. */
  skipped: Array<SkippedSample>,
  /** How the numbers were made, for the screen and the files. */
  notes: Array<string>,
  /**
   * For a controls analysis of the service: the control it ran on, and the field and value
   * that made its batch.
   */
  batch_of: ControlBatch | null,
};

/** The batch a controls analysis scored. */
export type ControlBatch = {
  /** The control the analysis ran on. */
  control: string,
  /** The custom field that names the batch. */
  field: string,
  /** Its value. */
  value: string,
};

/** Files of a folder per state. */
export type Counts = {
  /** Found, may still change. */
  seen: number,
  /** Complete, waiting for their run or sample. */
  settled: number,
  /** Being uploaded (or waiting to be). */
  uploading: number,
  /** On the service. */
  confirmed: number,
  /** Could not be uploaded. */
  failed: number,
};

/** A taxon on the way to the sunburst's centre (a breadcrumb). */
export type CrumbView = {
  /** Its tax id. */
  tax_id: string,
  /** Its name. */
  name: string,
  /** Its rank. */
  rank: string,
  /** Its reads, with those below it. */
  reads: number,
};

/** Upload or download. */
export type Direction = "upload" | "download";

/** What the diversity view asks for. */
export type DiversityRequest = {
  /** The samples (ids), 2 to 500. */
  samples: Array<string>,
  /** The rank: `species`, `genus`, ... */
  rank: string,
  /**
   * The measure of the beta diversity (a comparison measure, or `readcount`); none: the best
   * measure every sample has.
   */
  measure?: string | null,
  /**
   * The beta diversity: `braycurtis` (the default), `jaccard`, `weighted_unifrac`,
   * `unweighted_unifrac`, `aitchison`.
   */
  metric?: string | null,
  /** Group samples by this metadata field for the tests and the points' colours. */
  group_by?: string | null,
  /** PERMANOVA's permutations (default 999, at most 9,999). */
  permutations?: number | null,
  /** The permutations' seed (default 42). */
  seed: number | null,
  /** Keep the host's reads (default: left out). */
  show_host: boolean,
};

/** A sample in the diversity view. */
export type DiversitySample = {
  /** Its id. */
  id: string,
  /** Its name. */
  label: string,
  /** Its value of the grouping field. */
  group: string | null,
};

/** The diversity view as the screens show it: the numbers and both charts. */
export type DiversityScreen = {
  /** The numbers. */
  view: DiversityView,
  /** The alpha diversity chart as SVG (points: `<circle class="point" data-sample>`). */
  alpha_svg: string,
  /** The ordination chart as SVG (the same points). */
  ordination_svg: string,
};

/** The diversity view. */
export type DiversityView = {
  /** The samples, in order. */
  samples: Array<DiversitySample>,
  /** The rank. */
  rank: string,
  /** The beta diversity's measure (key). */
  measure: string,
  /** Its name, lower case ("re-estimated abundance"). */
  measure_label: string,
  /** The beta diversity (key) and its name. */
  metric: string,
  /** Its name on a chart. */
  metric_label: string,
  /** The grouping field, if any. */
  group_by: string | null,
  /** The metadata fields to group by: the samples' custom fields, then the standard ones. */
  fields: Array<string>,
  /** Alpha diversity, one column per measure. */
  alpha: Array<AlphaColumn>,
  /** `distances[i][j]`. */
  distances: Array<Array<number>>,
  /** The principal coordinates. */
  ordination: OrdinationView,
  /** PERMANOVA of the grouping on the distances, when samples are grouped. */
  permanova: TestView | null,
  /** Why a test could not be made, in words. */
  test_notes: Array<string>,
  /** What went in and how, one sentence each: written on every chart and export. */
  methods: Array<string>,
  /** Samples left out, with why. */
  skipped: Array<SkippedSample>,
};

/** One file to upload as a document. */
export type DocumentFile = {
  /** The window's id for this upload (its events carry it). */
  id: string,
  /** The file. */
  path: string,
};

/** One document on the screen. */
export type DocumentRow = {
  /** Its id. */
  id: string,
  /** Its file name. */
  filename: string,
  /** Its size in bytes. */
  size: number,
  /** When it was uploaded (RFC 3339). */
  created_at: string,
  /** Who uploaded it (its owner). */
  owner: Person,
  /** Whether the signed-in user uploaded it (and so may rename, share or delete it). */
  mine: boolean,
  /** Who else may download it. */
  shared_with: Array<Person>,
};

/** A document transfer's progress, sent in `document-transfer` events. */
export type DocumentTransfer = {
  /** The window's id for the transfer. */
  id: string,
  /** Upload or download. */
  direction: Direction,
  /** The file's name. */
  name: string,
  /** Where it stands. */
  state: TransferState,
  /** Bytes moved. */
  done: number,
  /** Bytes in all (0 while not known). */
  total: number,
  /** The document, once uploaded (or the one being downloaded). */
  document_id: string | null,
  /** Where a download was saved. */
  path: string | null,
  /** Why it failed. */
  error: string | null,
};

/** The Documents screen. */
export type DocumentsView = {
  /** The user's own documents and those shared with them, newest first. */
  documents: Array<DocumentRow>,
  /** The signed-in user's e-mail address. */
  email: string | null,
};

/** An event as the screen shows it. */
export type EventRow = {
  /** Its id. */
  id: string,
  /** Its webhook's id. */
  webhook: string,
  /** Its type. */
  event_type: string,
  /** The record it is about (`samples/…`). */
  subject: string,
  /** `pending`, `retryable`, `success` or `failed`. */
  status: string,
  /** Tries so far. */
  attempts: number,
  /** When it happened. */
  created_at: string,
  /** When it is tried next, if it will be. */
  next_attempt_at: string | null,
  /** Why the last try failed. */
  last_error: string | null,
};

/** An event type a webhook may ask for, and when it is sent. */
export type EventTypeInfo = {
  /** Its name (`analysis.completed`; `*` for every type). */
  name: string,
  /** When it is sent, in words. */
  means: string,
};

/** What checking one file found. */
export type FileCheck = {
  /** The file. */
  path: string,
  /** Its name. */
  name: string,
  /** Its size in bytes. */
  size: number,
  /** FASTA or FASTQ, when readable. */
  format: string | null,
  /** The compression, when readable. */
  compression: string | null,
  /** Reads (records). */
  reads: number,
  /** Bases. */
  bases: number,
  /** Mean read length. */
  mean_length: number,
  /** What the reads' names say about pairing, in words. */
  pairing: string | null,
  /** The other file of a suggested read pair. */
  mate: string | null,
  /** Why the file cannot be uploaded; `None` when it can. */
  problem: string | null,
};

/** Where a file or a sample stands. */
export type FileState = "seen" | "settled" | "uploading" | "confirmed" | "failed";

/** One file the watcher found. */
export type FileView = {
  /** Its path inside the watched folder. */
  path: string,
  /** Its size when last seen. */
  size: number,
  /** `seen`, `settled`, `uploading`, `confirmed` or `failed`. */
  state: FileState,
};

/** A taxon called a possible contaminant. */
export type FlaggedTaxon = {
  /** Its tax id. */
  tax_id: string,
  /** Its name. */
  name: string,
  /** Its score. */
  score: number | null,
};

/** One saved folder on the screen. */
export type FolderView = {
  /** It is not there (an unmounted share, a removed disk): it is skipped until it is back. */
  missing: boolean,
  /** Its files per state. */
  files: Counts,
  /** Its files (at most 300, the unfinished first), with their state. */
  file_list: Array<FileView>,
  /** The folder. */
  path: string,
  /** Look into subfolders (run folders need it). */
  recursive: boolean,
  /** Glob patterns (relative to the folder) a file must match to be considered; none: all. */
  include: Array<string>,
  /** Glob patterns (relative to the folder) of files to leave alone. */
  exclude: Array<string>,
  /** How files become samples. */
  layout: Layout,
  /** Illumina options. */
  illumina: IlluminaOptions,
  /** Nanopore options. */
  nanopore: NanoporeGrouping,
  /** The project (id) new samples go into. */
  project: string | null,
  /** Tags (names) given to new samples. */
  tags: Array<string>,
  /** Custom metadata given to new samples (string, number or boolean values). */
  metadata: { [key in string]: JsonValue },
  /** Jobs (ids) to run on each new sample once it is confirmed. */
  jobs: Array<string>,
  /** Alert rules for this folder's samples and runs, besides the ones for every folder. */
  alerts: Array<string>,
};

/** A group and its size. */
export type GroupSize = {
  /** The group's value of the field. */
  group: string,
  /** Its samples. */
  samples: number,
};

/** A copy of a sample without its host's reads, as started from the sample page. */
export type HostCopy = {
  /** The new sample's id. */
  sample_id: string,
  /** Its file name. */
  filename: string,
};

/** How an Illumina run's FASTQ files become samples. */
export type IlluminaOptions = {
  /** Make one interleaved sample of a sample's R1 and R2 files. */
  pair: boolean,
  /** Join a sample's lanes (L001, L002, ...) into one sample. */
  join_lanes: boolean,
};

/**
 * A job's arguments form: its name and the JSON Schema of its arguments (an empty object
 * schema when the job takes none).
 */
export type JobArgs = {
  /** The job's id. */
  id: string,
  /** Its name. */
  name: string,
  /** The kind of analysis it makes. */
  kind: string,
  /** `job_args_schema`. */
  schema: JsonValue,
};

/** A job the user can run, for pickers. */
export type JobChoice = {
  /** Its id. */
  id: string,
  /** Its name. */
  name: string,
  /** The kind of analysis it makes (`classification`, `panel`, ...). */
  kind: string,
};

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/** How the files of a folder are turned into samples. */
export type Layout = "auto" | "illumina" | "nanopore" | "files";

/** Records whose length is in `from..=to`. */
export type LengthBin = {
  /** Shortest length in the bin. */
  from: number,
  /** Longest length in the bin. */
  to: number,
  /** Records in the bin. */
  reads: number,
};

/** A one-time link to give a user: an invitation or a password reset. */
export type LinkView = {
  /** Whom it is for. */
  email: string,
  /** The address. */
  url: string,
  /** When it ends. */
  expires_at: string,
};

/** Upload progress of one sample, as the watcher reports it. */
export type Live = {
  /** Bytes sent. */
  sent: number,
  /** Bytes in all. */
  total: number,
  /** Bytes per second since the upload started. */
  rate: number,
};

/** One barcode (or sample) of a run. */
export type LiveGroup = {
  /** The barcode, or the sample's name. */
  name: string,
  /** Samples made of it so far: its batches, or the one sample. */
  batches: number,
  /** Of those, on the service. */
  uploaded: number,
  /** Whose upload failed (and waits for a retry). */
  upload_failed: number,
  /** Whose classification finished. */
  classified: number,
  /** Whose classification failed. */
  classification_failed: number,
  /** Reads in its classified batches. */
  reads: number,
  /**
   * The most abundant taxa at the dashboard's rank across its classified batches, most
   * reads first.
   */
  taxa: Array<TaxonCount>,
  /**
   * Each of those taxa's colour (`#RRGGBB`), as every chart draws it
   * ([`mgds_api::palette`]).
   */
  colours: Array<string>,
  /** How the shares of those taxa grew as each batch's classification finished. */
  series: Array<LivePoint>,
  /** Its alerts (the group's, and its samples'). */
  alerts: Array<Alert>,
  /** The ids of its samples on the service. */
  sample_ids: Array<string>,
};

/** The group after some of its batches were classified. */
export type LivePoint = {
  /** When the last of those batches finished (RFC 3339). */
  at: string,
  /** Batches classified by then. */
  batches: number,
  /** Their reads. */
  reads: number,
  /**
   * Each of the group's `taxa`, in the same order: its reads so far as a percentage of
   * all the reads so far.
   */
  percent: Array<number>,
};

/** A run on the dashboard. */
export type LiveRun = {
  /** The run folder. */
  path: string,
  /** The run id. */
  run_id: string,
  /** `illumina` or `nanopore`. */
  kind: string,
  /**
   * `waiting` (sequencing, or files still being written), `complete`, `uploaded` or
   * `failed`, as the watcher last saw it.
   */
  state: string,
  /** What it waits for, or why it failed. */
  detail: string | null,
  /** The instrument finished the run (its completion marker or final summary is there). */
  finished: boolean,
  /** When the run's state last changed (RFC 3339): when it finished, once finished. */
  updated_at: string | null,
  /** Its barcodes (or samples), by name. */
  groups: Array<LiveGroup>,
};

/** The tags, projects and jobs the user can see. */
export type Lookups = {
  /** Tags. */
  tags: Array<Named>,
  /** Projects. */
  projects: Array<Named>,
  /** Jobs (none if the service would not list them). */
  jobs: Array<JobChoice>,
  /** The sequencing platforms the metadata accepts. */
  platforms: Array<string>,
  /** The library types the metadata accepts. */
  library_types: Array<string>,
  /** The sample types the metadata accepts. */
  sample_types: Array<string>,
};

/** One marker of a panel. */
export type Marker = {
  /** Marker sequence name. */
  name: string,
  /** What it marks. */
  description: string,
  /** Whether it was found. */
  status: MarkerStatus,
  /** Marker sequence length. */
  length: number,
  /** Percent identity (long markers). */
  identity?: number | null,
  /** Percent of the marker covered (long markers). */
  coverage?: number | null,
  /** Depth of coverage (long markers). */
  depth?: number | null,
  /** Reads matching exactly (short markers). */
  n_reads_exact_match?: number | null,
  /** Reads matching within the panel's SNP allowance (short markers). */
  n_reads_partial_match?: number | null,
};

/** Whether a marker was found. */
export type MarkerStatus = "present" | "probable" | "absent";

/** Read 2 of a pair. */
export type MateFile = {
  /** Its name. */
  name: string,
  /** Its size in bytes. */
  size: number,
};

/** A measure the view may switch to. */
export type MeasureChoice = {
  /** `reestimated`, `genome_copies`, `read_share` or `readcount`. */
  key: string,
  /** Its name (`Re-estimated abundance`, ...). */
  label: string,
  /** What it measures, in a sentence. */
  explanation: string,
};

/** One member of a project. */
export type Member = {
  /** The person. */
  person: Person,
  /** Whether they own the project. */
  owner: boolean,
  /** What they may do. */
  permissions: Array<string>,
};

/** The metadata record of a sample. */
export type Metadata = {
  /** Address of the record. */
  $uri: string,
  /** The sample described. */
  sample: Ref,
  /** Marked by the user as a favourite. */
  starred: boolean,
  /** Free-form key/value pairs. */
  custom: { [key in string]: JsonValue },
  /** The lab's own identifier for the sample; unique among pre-uploaded samples. */
  external_sample_id: string | null,
  /** Display name. */
  name: string | null,
  /** Free-text description. */
  description: string | null,
  /** When the specimen was collected (RFC 3339). */
  date_collected: string | null,
  /** When it was sequenced (RFC 3339). */
  date_sequenced: string | null,
  /** Sequencing platform, one of [`PLATFORMS`](crate::PLATFORMS). */
  platform: string | null,
  /** `WGS`, `Targeted/16S` or `Other`. */
  library_type: string | null,
  /** `Isolate`, `Metagenomic` or `Other`. */
  sample_type: string | null,
  /** Latitude of the collection site. */
  location_lat: number | null,
  /** Longitude of the collection site. */
  location_lon: number | null,
  /** Collection site in words. */
  location_string: string | null,
};

/**
 * Metadata given with a pre-upload or upload, or in a metadata update. Absent fields are left
 * alone; in an update an explicit `null` clears a field.
 */
export type MetadataInput = {
  /** Marked as a favourite. */
  starred?: boolean,
  /** Free-form key/value pairs (values: string, number, boolean or null). */
  custom?: { [key in string]: JsonValue },
  /** The lab's own identifier, at most 60 characters. */
  external_sample_id?: string | null,
  /** Display name, at most 255 characters. */
  name?: string | null,
  /** Free-text description. */
  description?: string | null,
  /** When the specimen was collected (RFC 3339). */
  date_collected?: string | null,
  /** When it was sequenced (RFC 3339). */
  date_sequenced?: string | null,
  /** One of [`PLATFORMS`](crate::PLATFORMS). */
  platform?: string | null,
  /** One of [`LIBRARY_TYPES`](crate::LIBRARY_TYPES). */
  library_type?: string | null,
  /** One of [`SAMPLE_TYPES`](crate::SAMPLE_TYPES). */
  sample_type?: string | null,
  /** Latitude, -90 to 90. */
  location_lat?: number | null,
  /** Longitude, -180 to 180. */
  location_lon?: number | null,
  /** Collection site in words, at most 255 characters. */
  location_string?: string | null,
  /** The sample (accepted and ignored in updates: a record never moves to another sample). */
  sample?: RefOrId,
};

/** A tag or project, for pickers and for showing names in the table. */
export type Named = {
  /** Its id. */
  id: string,
  /** Its name. */
  name: string,
};

/** How a Nanopore run's batch files become samples. */
export type NanoporeGrouping = "per_barcode" | "per_file";

/** What the UI sends to add a folder. */
export type NewFolder = {
  /** The folder. */
  path: string,
  /** `auto`, `illumina`, `nanopore` or `files`. */
  layout: Layout,
  /** Look into subfolders. */
  recursive: boolean,
  /** Glob patterns a file must match (empty: all). */
  include?: Array<string>,
  /** Glob patterns of files to leave alone. */
  exclude?: Array<string>,
  /** The project (id) for new samples. */
  project?: string | null,
  /** Tags (names) for new samples. */
  tags?: Array<string>,
  /** Custom metadata for new samples. */
  metadata?: { [key in string]: JsonValue },
  /** Jobs (ids) to run on each new sample. */
  jobs?: Array<string>,
  /** Illumina: interleave R1 and R2 into one sample. */
  pair: boolean,
  /** Illumina: join lanes. */
  join_lanes: boolean,
  /** Nanopore: one sample per batch file instead of per barcode. */
  per_file: boolean,
  /**
   * The folder's own alert rules, as written (`Salmonella enterica >= 0.1%`), besides the
   * rules for every folder.
   */
  alerts?: Array<string>,
};

/** What the UI sends to add a remote profile. */
export type NewProfile = {
  /** Its name. */
  name: string,
  /** The service's base address. */
  base_url: string,
  /** The API key. */
  api_key: string,
  /** The user agreed to keep the key in a private file because there is no keychain. */
  store_key_in_file?: boolean,
};

/** What the window sends to create a project. */
export type NewProject = {
  /** Short name: 3 to 15 letters, digits, `-` or `_`, unique in the organisation. */
  short_name: string,
  /** Display name (default: the short name). */
  name?: string | null,
  /** Description. */
  description?: string | null,
  /** Whether anyone may see it. */
  public?: boolean,
};

/** What the UI sends to add a remote profile signed in by the service's single sign-on. */
export type NewSsoProfile = {
  /** Its name. */
  name: string,
  /** The service's base address. */
  base_url: string,
  /**
   * The user agreed to keep what keeps the profile signed in in a private file because there
   * is no keychain.
   */
  store_key_in_file?: boolean,
};

/** The principal coordinates of the beta diversity. */
export type OrdinationView = {
  /** Each axis's share of the variance (the first [`AXES`] at most). */
  proportion_explained: Array<number>,
  /** `coordinates[sample][axis]`, the same axes. */
  coordinates: Array<Array<number>>,
};

/**
 * What a user may do in their organisation, as One Codex names the roles. Ordered: an owner
 * may do all an admin may, an admin all a member may.
 */
export type OrgRole = "member" | "admin" | "owner";

/** The Organisation screen. */
export type OrganizationView = {
  /** Its name. */
  name: string,
  /** The signed-in user's role. */
  role: OrgRole,
  /** How many users it has. */
  user_count: number,
  /**
   * Its users (admins and owners only; `None` for members), by e-mail; at most
   * [`MAX_USERS_SHOWN`] of those the filter keeps.
   */
  users: Array<UserRow> | null,
  /** How many users the filter keeps. */
  shown_of: number,
  /** The roles the signed-in user may invite with. */
  invite_roles: Array<OrgRole>,
  /** The lab's name on its reports' covers (its name unless set). */
  lab_name: string,
  /**
   * Its logo on its reports' covers, as a `data:` address for an `<img>` (nothing in an
   * image runs), if it has one.
   */
  logo: string | null,
};

/** The panels view. */
export type PanelView = {
  /** The panel's name. */
  panel_name: string,
  /** Its sub-panels. */
  sub_panels: Array<SubPanelView>,
};

/** A person, as a screen shows them. */
export type Person = {
  /** Their user id. */
  id: string,
  /** Their e-mail address, when the service shows it to the user. */
  email: string | null,
  /** Whether this is the signed-in user. */
  me: boolean,
};

/** Base qualities at positions `from..=to` (1-based) of the reads that reach them. */
export type PositionQuality = {
  /** First position of the bin (1 is a read's first base). */
  from: number,
  /** Last position of the bin. */
  to: number,
  /** Bases counted at these positions. */
  bases: number,
  /** Mean Phred score. */
  mean: number,
  /** 10th percentile. */
  p10: number,
  /** Lower quartile. */
  q1: number,
  /** Median. */
  median: number,
  /** Upper quartile. */
  q3: number,
  /** 90th percentile. */
  p90: number,
};

/** One profile, as the profiles screen lists it. */
export type ProfileView = {
  /** Its name. */
  name: string,
  /** Its base address (`local` for the embedded service). */
  base_url: string,
  /** Whether it is the one in use. */
  current: boolean,
  /** Whether it signs in by the service's single sign-on (not an API key). */
  sso: boolean,
};

/** The profiles screen. */
export type ProfilesView = {
  /** All profiles, the local one first. */
  profiles: Array<ProfileView>,
  /** Why the OS keychain cannot be used, when it cannot. */
  keychain_problem: string | null,
};

/** A change to a project from its page. */
export type ProjectChange = {
  /** New short name. */
  short_name?: string | null,
  /** New display name. */
  name?: string | null,
  /** New description (an empty one clears it). */
  description?: string | null,
  /** Make it public (or private). */
  public?: boolean | null,
};

/** A project opened on its page. */
export type ProjectDetail = {
  /** The project. */
  project: ProjectRow,
  /**
   * Its members, the owner first; `None` when the service shows them only to its people
   * (a public project the user is not in).
   */
  members: Array<Member> | null,
  /** How many of its samples the user can see. */
  samples: number,
};

/** One project on the screen. */
export type ProjectRow = {
  /** Its id. */
  id: string,
  /** Its short name (3 to 15 of letters, digits, `-`, `_`). */
  short_name: string,
  /** Its display name. */
  name: string,
  /** Its description. */
  description: string | null,
  /** Whether anyone may see it. */
  public: boolean,
  /** Who owns it. */
  owner: Person,
  /** How the signed-in user relates to it. */
  role: Role,
  /** What the signed-in user may do in it (`can_see_files`, `can_add_files`, ...). */
  permissions: Array<string>,
};

/** Samples side by side in the comparison's quality tab. */
export type QcComparison = {
  /**
   * One row per sample asked for, in the order asked (the histograms left out: the table
   * shows figures).
   */
  rows: Array<QcRow>,
  /** How many failed a threshold. */
  failed: number,
  /** The thresholds, in words. */
  thresholds: Array<string>,
};

/** One sample in a table of quality control. */
export type QcRow = {
  /** The sample's id (empty in a one-sample file). */
  id: string,
  /** Its name. */
  name: string,
  /** Its figures; `None` when it has none (see `why`). */
  qc: ReadQc | null,
  /** Why it has none. */
  why: string | null,
};

/** One sample's quality control on its page. */
export type QcView = {
  /** The figures, or `None` (see `missing`). */
  qc: ReadQc | null,
  /** Why there are none. */
  missing: string | null,
  /** The chart (four panels, the figures and the verdict under them), as SVG. */
  svg: string | null,
  /** The thresholds a sample is judged by, in words. */
  thresholds: Array<string>,
};

/**
 * Read quality control of one sample, measured as the classification engine read it. Read
 * leniently: a field missing from a service's answer is read as empty or zero rather than
 * failing the whole results.
 */
export type ReadQc = {
  /** Records read (each mate of a pair counts once). */
  reads: number,
  /** Pairs (0 for single reads). */
  pairs: number,
  /** Bases in all records. */
  bases: number,
  /** Shortest record, in bases. */
  min_length: number,
  /** Longest record, in bases. */
  max_length: number,
  /** Mean record length. */
  mean_length: number,
  /** Median record length (exact below 256 bases, else within 1%). */
  median_length: number,
  /**
   * N50: the length such that records at least this long hold half the bases (exact below
   * 256 bases, else within 1%).
   */
  n50: number,
  /**
   * Whether these are long reads (median length over 1,000 bases): positions are binned,
   * the quality threshold is Q10, and N50 is the length figure to read.
   */
  long_reads: boolean,
  /** G and C as a share of the A, C, G and T bases. */
  gc: number,
  /** N and other ambiguous bases as a share of all bases. */
  n_share: number,
  /** Mean Phred score of all bases (`None` for FASTA). */
  mean_quality: number | null,
  /** Share of bases at Q30 or above (`None` for FASTA). */
  q30_share: number | null,
  /** Records by length, in at most [`MAX_LENGTH_BINS`] bins covering every length seen. */
  lengths: Array<LengthBin>,
  /**
   * Whether the length bins are of equal ratios (a log scale: long reads whose lengths span
   * a factor of 4 or more) rather than of equal widths.
   */
  lengths_log_scale: boolean,
  /**
   * Base quality by position in the read (empty for FASTA): each position alone below 256,
   * then positions in bins (32 per doubling), neighbouring bins merged until at most
   * [`MAX_POSITION_BINS`] are left. Counted from every read until 4 Mi bases are counted,
   * then from one read in thirteen (the mean quality and the Q30 share count every base).
   */
  quality_by_position: Array<PositionQuality>,
  /**
   * Records by read quality: entry `q` counts the records whose mean base score is `q`
   * (rounded down, as FastQC's per-sequence quality; the last entry, [`MAX_QUALITY`], counts
   * everything above). Empty for FASTA. A mean of scores reads higher than Oxford Nanopore's
   * own read quality, which averages error probabilities.
   */
  read_quality: Array<number>,
  /**
   * Records by GC content, 101 entries: entry `p` counts records with `p`% GC, each record
   * shared out over the whole percentages its GC count stands for (rounded to whole
   * records), so that reads of one length draw no comb.
   */
  gc_content: Array<number>,
  /** The thresholds the sample failed, in words (empty when it passed). */
  failures: Array<string>,
};

/** A reference to another resource: `{"$ref": "/api/v1/<collection>/<id>"}`. */
export type Ref = {
  /** The address of the referenced resource. */
  $ref: string,
};

/**
 * A reference given in a request body: either a reference object or a bare identifier, as the
 * reference schema allows for request fields such as `project`, `sample` and `user`.
 */
export type RefOrId = Ref | string;

/** A report made, with what it says about itself. */
export type ReportMade = {
  /** The file's name it is offered under. */
  file_name: string,
  /** Its size in bytes. */
  bytes: number,
  /** Samples in it. */
  samples: number,
  /** Samples left out, with why. */
  skipped: Array<SkippedSample>,
  /** The document it was kept as, when kept (its id). */
  document: string | null,
};

/** How the signed-in user relates to a project. */
export type Role = "owner" | "member" | "public";

/** A run folder's last reported state. */
export type RunRecord = {
  /** The run folder. */
  path: string,
  /** The watched folder. */
  folder: string,
  /** `illumina` or `nanopore`. */
  kind: string,
  /** The run id. */
  run_id: string,
  /** `waiting`, `complete`, `uploaded` or `failed`. */
  state: string,
  /** What it waits for, or why it failed. */
  detail: string | null,
};

/** A change to a sample from its page. */
export type SampleChange = {
  /** New visibility. */
  visibility?: Visibility | null,
  /** New project id; an empty string takes it out of its project. */
  project?: string | null,
  /** New tag ids (replacing the old ones). */
  tags?: Array<string> | null,
  /** Names of new tags to create and attach. */
  new_tags?: Array<string>,
  /** New metadata fields. */
  metadata?: MetadataInput | null,
};

/**
 * The taxa a controls analysis of a sample's batch calls possible contaminants, for the
 * sample's page: the newest such analysis that scored the sample.
 */
export type SampleContaminants = {
  /** The controls analysis. */
  analysis_id: string,
  /** The control it ran on. */
  control_id: string,
  /** The control's name. */
  control_name: string,
  /** The method in words. */
  method_label: string,
  /** The threshold. */
  threshold: number,
  /** The rank scored. */
  rank: string,
  /** When it was scored. */
  created_at: string,
  /** Taxa called possible contaminants (tax id and name), lowest score first. */
  flagged: Array<FlaggedTaxon>,
  /** Other controls analyses that scored this sample (older, or of other batches). */
  others: number,
};

/** The sample page. */
export type SampleDetail = {
  /** The sample. */
  sample: SampleRow,
  /** Its metadata record. */
  metadata: Metadata | null,
  /** Its analyses. */
  analyses: Array<AnalysisRow>,
  /** Whether the signed-in user owns it (and so may edit it). */
  editable: boolean,
};

/** The table's state as the UI sends it. */
export type SampleQuery = {
  /** Page number, from 1. */
  page: number,
  /** Rows per page. */
  per_page: number,
  /** Column to sort by: `created_at`, `filename`, `size`, `visibility`. */
  sort?: string | null,
  /** Descending order. */
  desc?: boolean,
  /** The file name contains this (any case). */
  filename?: string | null,
  /** Carries these tags (ids): all of them, or any of them with `any_tag`. */
  tags?: Array<string>,
  /** Samples with any of `tags` rather than all of them. */
  any_tag?: boolean,
  /** In this project (id). */
  project?: string | null,
  /** Uploaded on or after this day (`YYYY-MM-DD`). */
  from?: string | null,
  /** Uploaded on or before this day (`YYYY-MM-DD`). */
  to?: string | null,
  /** Visibility: `public`, `shared` or `private`. */
  visibility?: string | null,
};

/** One row of the samples table. */
export type SampleRow = {
  /** Sample id. */
  id: string,
  /** File name (none while awaiting data). */
  filename: string | null,
  /** File size in bytes. */
  size: number | null,
  /** Upload time (RFC 3339). */
  created_at: string,
  /** `public`, `shared`, `private`, ... */
  visibility: string,
  /** Project id. */
  project: string | null,
  /** Tag ids. */
  tags: Array<string>,
  /** The primary classification's id, once there is one. */
  classification: string | null,
  /**
   * Taxon alerts the watched folders raised for it (`Salmonella enterica (0.210%, rule:
   * Salmonella enterica >= 0.1%)`).
   */
  alerts: Array<string>,
  /**
   * Why the service could not make the sample's file (a pair uploaded as two files whose
   * mates do not pair); the sample then stays `importing`.
   */
  import_error: string | null,
};

/** One page of the table. */
export type SamplesPage = {
  /** The rows. */
  rows: Array<SampleRow>,
  /** Samples matching the filters on all pages. */
  total: number,
  /** This page's number. */
  page: number,
  /** Rows per page. */
  per_page: number,
};

/** A sample that is not in the chart, and why. */
export type SkippedSample = {
  /** Its id. */
  id: string,
  /** Its name. */
  name: string,
  /** Why, in words. */
  why: string,
};

/**
 * How one sample's file is made. (The names on the wire are those of the watcher's journal,
 * which keeps them across versions.)
 */
export type Source = { "single": string } | { "concat": Array<string> } | { "interleave": Array<[string, string]> };

/** One sub-panel for the panels view. */
export type SubPanelView = {
  /** Its name. */
  name: string,
  /** What it detects. */
  description: string,
  /** Its markers. */
  markers: Array<Marker>,
  /** Markers found (present or probable). */
  found: number,
};

/** What the sample page's sunburst asks for. */
export type SunburstControls = {
  /** The taxon at the centre (none: the root of the taxonomy). */
  root?: string | null,
  /** Keep the host's reads. */
  show_host: boolean,
  /** Rings below the centre (default 10, at most [`mgds_plots::MAX_RINGS`]). */
  rings?: number | null,
  /** A title above a saved picture (the sample's name; at most 200 characters are kept). */
  title?: string | null,
};

/** The sunburst for the UI. */
export type SunburstView = {
  /**
   * The SVG document: each segment a `<path class="segment" data-tax-id>` with a `<title>`;
   * the centre a `<circle class="centre">`, with its parent's `data-tax-id` when zoomed in.
   */
  svg: string,
  /** From the root of the taxonomy to the centre. */
  path: Array<CrumbView>,
  /** Segments drawn. */
  segments: number,
  /** Taxa left out: too narrow to draw, or deeper than the rings. */
  left_out: number,
};

/** A tag with the number of samples carrying it, for the Tags screen. */
export type TagCount = {
  /** Its id. */
  id: string,
  /** Its name. */
  name: string,
  /** Samples the user can see that carry it. */
  samples: number,
};

/** One taxon's reads in a sample (or summed over a run's batches). */
export type TaxonCount = {
  /** Taxonomy id. */
  tax_id: string,
  /** Scientific name. */
  name: string,
  /** Rank. */
  rank: string,
  /** Reads classified to it or below it. */
  reads: number,
};

/** Progress of saving one taxon's reads, as `taxon-reads-progress` events. */
export type TaxonReadsProgress = {
  /** The taxon. */
  taxon: string,
  /** Samples finished. */
  done: number,
  /** Samples in all. */
  total: number,
  /** The sample being worked on. */
  current: string | null,
  /** Files written so far. */
  written: Array<string>,
  /** Samples that could not be done, with why. */
  problems: Array<string>,
  /** All done. */
  finished: boolean,
};

/** One taxon of a classification result table. */
export type TaxonRow = {
  /** NCBI taxonomy id. */
  tax_id: string,
  /** Scientific name. */
  name: string,
  /** Rank (`species`, `genus`, `no rank`, ...). */
  rank: string,
  /** Parent taxon; null for the root. */
  parent_tax_id: string | null,
  /** Reads classified at exactly this taxon. */
  readcount: number,
  /** Reads classified at this taxon and its descendants. */
  readcount_w_children: number,
  /** Estimated relative abundance (species level, primary database only). */
  abundance: number | null,
  /** Abundance of this taxon and its descendants, where the service reports it. */
  abundance_w_children?: number | null,
  /** Reads at exactly this taxon that passed the sample-wide filter, where reported. */
  filtered_readcount?: number | null,
  /** Reads at this taxon and its descendants that passed the filter, where reported. */
  filtered_readcount_w_children?: number | null,
  /**
   * Share of the sample's reads re-estimated for this species (or genus) from the database's
   * k-mer distribution (Bracken): reads placed above the species are shared out to the species
   * below in proportion to how likely each one's reads are to stop there. Sums to 1 over the
   * species rows (and, separately, over the genus rows); absent for other ranks, for taxa with
   * too few reads, and for databases without a k-mer distribution.
   */
  reestimated_abundance?: number | null,
  /**
   * Share of genome copies counted in bases (an MGDS addition, species rows): the bases of
   * the reads classified in the species' clade over its mean genome length, as a share of
   * all species. Where read lengths differ between taxa (long reads), this is the genome
   * copies; the read-count share ([`TaxonRow::abundance`]) favours taxa with longer reads.
   * Absent where the database does not know every species' genome length.
   */
  bases_abundance?: number | null,
};

/** A test's outcome, with its method in words. */
export type TestView = {
  /** The test and its parameters, as written on charts and exports. */
  method: string,
  /** Its statistic (none where undefined). */
  statistic: number | null,
  /** Its p-value (none where undefined). */
  p_value: number | null,
  /** The groups tested, with their sizes. */
  groups: Array<GroupSize>,
};

/** Where a document transfer stands. */
export type TransferState = "waiting" | "moving" | "done" | "failed" | "cancelled";

/** What the UI sends to start uploads. */
export type UploadBatch = {
  /** The files. */
  files: Array<UploadFile>,
  /** Tag names for every sample. */
  tags?: Array<string>,
  /** Project id for every sample. */
  project?: string | null,
  /** Metadata for every sample. */
  metadata?: MetadataInput | null,
};

/** One file to upload. */
export type UploadFile = {
  /** The UI's id for this upload (progress events carry it). */
  id: string,
  /** The file (read 1 of a pair that is joined). */
  path: string,
  /** Read 2 of a pair to join with `path` into one interleaved sample. */
  mate?: string | null,
};

/** What an upload makes. */
export type UploadKind = "sample" | "document";

/** What a finished upload made. */
export type UploadMade = {
  /** The new sample. */
  sample_id?: string | null,
  /** The new document. */
  document_id?: string | null,
};

/** One file of an upload, as a multipart upload on the store. */
export type UploadObject = {
  /** The file's name. */
  name: string,
  /** Its size. */
  size: number,
  /** The object it becomes. */
  key: string,
  /** The store's id of its multipart upload. */
  upload_id: string,
  /** Bytes per part (the last may be smaller). */
  part_size: number,
  /** Parts in all. */
  parts: number,
};

/** An upload's progress, as sent to the UI in `upload-progress` events. */
export type UploadProgress = {
  /** The UI's id for the upload. */
  id: string,
  /** Where it stands. */
  state: UploadState,
  /** Bytes sent. */
  sent: number,
  /** Bytes in all. */
  total: number,
  /** The new sample, when done. */
  sample_id: string | null,
  /** Why it failed, or why it is being retried. */
  error: string | null,
};

/** Where an upload stands, in the window. */
export type UploadState = "waiting" | "joining" | "sending" | "retrying" | "done" | "failed" | "cancelled";

/** A change to a user from the screen. */
export type UserChange = {
  /** A new role. */
  role?: OrgRole | null,
  /** Disable (`true`) or enable (`false`). */
  disabled?: boolean | null,
};

/** One user of the organisation, as its admins see them. */
export type UserRow = {
  /** User id. */
  id: string,
  /** E-mail address. */
  email: string,
  /** Role in the organisation. */
  role: OrgRole,
  /** When the account was made. */
  created_at: string,
  /** When it was disabled, if it is. */
  disabled_at: string | null,
  /**
   * Whether they have a password (else they have not taken up their invitation, or use an
   * API key only).
   */
  has_password: boolean,
  /** When their open invitation or reset link ends, if they have one. */
  link_expires_at: string | null,
  /** When one of their browser sessions was last used. */
  last_seen_at: string | null,
  /** Whether this is the signed-in user. */
  me: boolean,
  /** Whether the signed-in user may disable, enable, reset or revoke them. */
  manageable: boolean,
  /** The roles the signed-in user may give them (empty if none but their own). */
  roles: Array<OrgRole>,
};

/** Who may see a sample (see the spec's visibility rules). */
export type Visibility = "public" | "shared" | "private" | "importing" | "awaiting data";

/** What a [`WatchChanged`] event says. */
export type WatchChange = "progress" | "changed";

/** What the UI hears as the watcher works. */
export type WatchChanged = {
  /** Progress, or a change to reload the screen for. */
  kind: WatchChange,
  /** The sample's key, for progress. */
  key: string | null,
  /** Upload progress. */
  live: Live | null,
};

/** The "Watched folders" screen. */
export type WatchView = {
  /** The saved folders. */
  folders: Array<FolderView>,
  /** The app's watcher is running. */
  running: boolean,
  /** Uploads are paused. */
  paused: boolean,
  /** Why nothing is watched, or what stopped the watcher. */
  problem: string | null,
  /** Where the folders are saved (shared with `mgds watch`). */
  config_file: string,
  /** Run folders seen. */
  runs: Array<RunRecord>,
  /** Samples made, newest first (at most 500). */
  samples: Array<WatchedSample>,
  /** Samples in the queue in all. */
  samples_total: number,
  /** The upload speed limit in bytes per second (none: no limit). */
  upload_limit: number | null,
};

/** A sample made by the watcher, with its live progress. */
export type WatchedSample = {
  /** Upload progress, while it is being sent. */
  live: Live | null,
  /** Stable identity: the run folder (or file) and the sample's name. */
  key: string,
  /** The watched folder. */
  folder: string,
  /** The run folder, if any. */
  run: string | null,
  /** The run's id, if any. */
  run_id: string | null,
  /** The sample's name (metadata `name`). */
  name: string,
  /** The `external_sample_id` it has on the service. */
  external_id: string,
  /** How its file is made. */
  recipe: Source,
  /** Where it stands. */
  state: FileState,
  /** Its id on the service, once known. */
  sample_id: string | null,
  /** Failed attempts so far. */
  attempts: number,
  /** The last error. */
  error: string | null,
  /** Jobs still to start on it (after it was confirmed). */
  jobs_pending: boolean,
};

/** A webhook as the screen shows it. */
export type WebhookRow = {
  /** Its id. */
  id: string,
  /** Where events go. */
  post_url: string,
  /** The event type sent (`*`: every type). */
  event_type: string,
  /** Whether events are made and sent. */
  enabled: boolean,
  /** Events not yet delivered or given up. */
  waiting: number,
  /** When it was registered. */
  created_at: string,
};

/** A webhook just registered, or given a new secret: the secret is shown this once. */
export type WebhookSecretView = {
  /** The webhook's id. */
  id: string,
  /** Where events go. */
  post_url: string,
  /** The secret its deliveries are signed with. */
  secret: string,
};

/** The Webhooks panel of the Organisation screen (admins and owners). */
export type WebhooksView = {
  /** The organisation's webhooks, oldest first. */
  hooks: Array<WebhookRow>,
  /** The newest events (of those the filter keeps), at most [`EVENTS_SHOWN`]. */
  events: Array<EventRow>,
  /** How many events the filter keeps. */
  event_total: number,
  /** The event types to choose from. */
  types: Array<EventTypeInfo>,
};

/** The shell's commands: each resolves to its result, or rejects with a `CmdError`. */
export const commands = {
  /**
   * The abundance chart of classification `id`.
   */
  abundanceChart: (id: string, options: ChartControls): Promise<ChartView> =>
    invoke<ChartView>("abundance_chart", { id, options }),
  /**
   * Adds a remote profile after checking its key, and switches to it.
   */
  addProfile: (profile: NewProfile): Promise<ProfilesView> =>
    invoke<ProfilesView>("add_profile", { profile }),
  /**
   * Adds the colleague with this e-mail address to a project.
   */
  addProjectMember: (id: string, email: string, access: Access): Promise<ProjectDetail> =>
    invoke<ProjectDetail>("add_project_member", { id, email, access }),
  /**
   * Adds a remote profile signed in by the service's single sign-on (the system browser opens
   * at the provider), and switches to it.
   */
  addSsoProfile: (profile: NewSsoProfile): Promise<ProfilesView> =>
    invoke<ProfilesView>("add_sso_profile", { profile }),
  /**
   * Saves a folder to watch and starts watching it.
   */
  addWatchFolder: (folder: NewFolder): Promise<void> =>
    invoke<void>("add_watch_folder", { folder }),
  /**
   * Registers a webhook; its secret, shown once.
   */
  addWebhook: (postUrl: string, eventType: string): Promise<WebhookSecretView> =>
    invoke<WebhookSecretView>("add_webhook", { postUrl, eventType }),
  /**
   * The results of a finished alignment or functional profile, as the service sends them at
   * `/analyses/{id}/results` (everything the engine reported; `kind` is kept for the window's
   * calls and not needed).
   */
  analysisResults: (id: string, kind: string): Promise<JsonValue> =>
    invoke<JsonValue>("analysis_results", { id, kind }),
  /**
   * A page of the organisation's audit trail (admins and owners).
   */
  auditTrail: (query: AuditQuery): Promise<AuditPage> =>
    invoke<AuditPage>("audit_trail", { query }),
  /**
   * Cancels a document upload or download.
   */
  cancelDocumentTransfer: (id: string): Promise<boolean> =>
    invoke<boolean>("cancel_document_transfer", { id }),
  /**
   * Cancels an upload.
   */
  cancelUpload: (id: string): Promise<boolean> =>
    invoke<boolean>("cancel_upload", { id }),
  /**
   * Renames, describes, or makes public or private a project the user owns.
   */
  changeProject: (id: string, change: ProjectChange): Promise<ProjectDetail> =>
    invoke<ProjectDetail>("change_project", { id, change }),
  /**
   * Changes (or deletes) the selected samples: tags added or taken off, project, visibility.
   */
  changeSamples: (ids: string[], change: BulkChange): Promise<BulkOutcome> =>
    invoke<BulkOutcome>("change_samples", { ids, change }),
  /**
   * Changes a user's role, or disables or enables them.
   */
  changeUser: (id: string, change: UserChange): Promise<void> =>
    invoke<void>("change_user", { id, change }),
  /**
   * Checks dropped or picked files before anything is sent. The drop handler calls this with
   * the paths of Tauri's drag-and-drop event.
   */
  checkFiles: (paths: string[]): Promise<FileCheck[]> =>
    invoke<FileCheck[]>("check_files", { paths }),
  /**
   * The results of a classification.
   */
  classification: (id: string): Promise<ClassificationView> =>
    invoke<ClassificationView>("classification", { id }),
  /**
   * The compared samples' taxa scored against the negative controls among them (the
   * comparison's controls tab).
   */
  compareContaminants: (request: ContaminationRequest): Promise<ContaminationView> =>
    invoke<ContaminationView>("compare_contaminants", { request }),
  /**
   * The reads' quality control of the compared samples (the comparison's quality tab).
   */
  compareQc: (samples: string[]): Promise<QcComparison> =>
    invoke<QcComparison>("compare_qc", { samples }),
  /**
   * Samples side by side (the comparison view); fetching progress arrives in `compare-progress`
   * events.
   */
  compareSamples: (request: CompareRequest): Promise<ComparisonView> =>
    invoke<ComparisonView>("compare_samples", { request }),
  /**
   * A report of the comparison as `format` (`pdf` or `html`): saved where the user chooses, or
   * with `keep` kept as a document of the service. `None` when the user cancelled.
   */
  comparisonReport: (request: ComparisonReportRequest, format: string, keep: boolean): Promise<ReportMade | null> =>
    invoke<ReportMade | null>("comparison_report", { request, format, keep }),
  /**
   * The connection in use, connecting (and on first start, starting the local service) if needed.
   */
  connection: (): Promise<ConnectionView> =>
    invoke<ConnectionView>("connection"),
  /**
   * The scores of a controls analysis (a negative control's batch).
   */
  controlScores: (id: string): Promise<ContaminationView> =>
    invoke<ContaminationView>("control_scores", { id }),
  /**
   * Creates a project (its short name is checked before anything is sent).
   */
  createProject: (project: NewProject): Promise<Named> =>
    invoke<Named>("create_project", { project }),
  /**
   * Deletes a document and its file.
   */
  deleteDocument: (id: string): Promise<DocumentsView> =>
    invoke<DocumentsView>("delete_document", { id }),
  /**
   * Deletes a project; its samples stay, out of any project.
   */
  deleteProject: (id: string): Promise<void> =>
    invoke<void>("delete_project", { id }),
  /**
   * The demo reads (simulated from the demo genomes, gzipped FASTQ), written once into the app's
   * cache folder: the path to upload as a first sample from the empty samples screen.
   */
  demoReads: (): Promise<string> =>
    invoke<string>("demo_reads"),
  /**
   * The Documents screen: the user's documents and those shared with them.
   */
  documents: (): Promise<DocumentsView> =>
    invoke<DocumentsView>("documents"),
  /**
   * Asks where to save a document (the native dialog), then downloads it there; progress
   * arrives in `document-transfer` events under `id`. Answers the chosen path, or `None` when
   * the user cancelled the dialog.
   */
  downloadDocument: (id: string, document: string, fileName: string): Promise<string | null> =>
    invoke<string | null>("download_document", { id, document, fileName }),
  /**
   * Saves a file of the service where the user chooses: a sample's reads (`kind` `sample`), a
   * classification's read-level TSV (gzipped), an alignment (SAM, gzipped) or a functional
   * profile's table (TSV). None if they cancel.
   */
  downloadResults: (id: string, kind: string, fileName: string): Promise<string | null> =>
    invoke<string | null>("download_results", { id, kind, fileName }),
  /**
   * Saves the chart as SVG or PNG where the user chooses; answers the path, or `None` if cancelled.
   */
  exportChart: (id: string, options: ChartControls, format: string, fileName: string): Promise<string | null> =>
    invoke<string | null>("export_chart", { id, options, format, fileName }),
  /**
   * Saves the compared samples' quality control as CSV where the user chooses. Answers the
   * path, or `None` when the user cancelled.
   */
  exportCompareQc: (samples: string[], fileName: string): Promise<string | null> =>
    invoke<string | null>("export_compare_qc", { samples, fileName }),
  /**
   * Saves the comparison where the user chooses: the chart as `svg` or `png` (at `dpi`), or the
   * numbers behind it as `csv` or `tsv`. Answers the path, or `None` when the user cancelled.
   */
  exportComparison: (request: CompareRequest, format: string, dpi: number): Promise<string | null> =>
    invoke<string | null>("export_comparison", { request, format, dpi }),
  /**
   * Saves the contaminant scores as CSV where the user chooses. Answers the path, or `None`
   * when the user cancelled.
   */
  exportContaminants: (request: ContaminationRequest, fileName: string): Promise<string | null> =>
    invoke<string | null>("export_contaminants", { request, fileName }),
  /**
   * Saves a file of the diversity view where the user chooses (`what`: one of
   * [`diversity::FILES`], a PNG at `dpi`). Answers the path, or `None` when the user cancelled.
   */
  exportDiversity: (request: DiversityRequest, what: string, dpi: number): Promise<string | null> =>
    invoke<string | null>("export_diversity", { request, what, dpi }),
  /**
   * Saves a file of the quality control of classification `id` where the user chooses
   * (`format`: one of [`qc::FILES`]); answers the path, or `None` if cancelled.
   */
  exportQc: (id: string, format: string, fileName: string, title: string): Promise<string | null> =>
    invoke<string | null>("export_qc", { id, format, fileName, title }),
  /**
   * Saves the sunburst as SVG or PNG, or the hierarchy as Krona's text (`krona`), where the user
   * chooses; answers the path, or `None` if cancelled.
   */
  exportSunburst: (id: string, options: SunburstControls, format: string, fileName: string): Promise<string | null> =>
    invoke<string | null>("export_sunburst", { id, options, format, fileName }),
  /**
   * Adds someone to the organisation: the invitation link to give them.
   */
  inviteUser: (email: string, role: OrgRole): Promise<LinkView> =>
    invoke<LinkView>("invite_user", { email, role }),
  /**
   * A job's arguments form (its `job_args_schema`).
   */
  jobArgs: (id: string): Promise<JobArgs> =>
    invoke<JobArgs>("job_args", { id }),
  /**
   * Stops watching the sample page's analyses.
   */
  leaveSample: (): Promise<void> =>
    invoke<void>("leave_sample"),
  /**
   * One page of the Analyses screen.
   */
  listAnalyses: (query: AnalysisQuery): Promise<AnalysesPage> =>
    invoke<AnalysesPage>("list_analyses", { query }),
  /**
   * One page of the samples table, each row with the taxon alerts the watched folders raised.
   */
  listSamples: (query: SampleQuery): Promise<SamplesPage> =>
    invoke<SamplesPage>("list_samples", { query }),
  /**
   * The run dashboard: every run the watched folders saw, each barcode (or sample) with its
   * batches, reads and its `top` taxa at `rank` as they grew; changes arrive in `watch-changed`
   * events.
   */
  liveRuns: (rank: string, top: number): Promise<LiveRun[]> =>
    invoke<LiveRun[]>("live_runs", { rank, top }),
  /**
   * The tags and projects, for filters and pickers.
   */
  lookups: (): Promise<Lookups> =>
    invoke<Lookups>("lookups"),
  /**
   * The Organisation screen: the organisation, the user's role, and for its admins its users
   * (filtered by part of an e-mail address).
   */
  organization: (search: string | null): Promise<OrganizationView> =>
    invoke<OrganizationView>("organization", { search }),
  /**
   * The results of a panel analysis.
   */
  panel: (id: string): Promise<PanelView> =>
    invoke<PanelView>("panel", { id }),
  /**
   * Pauses or resumes the watcher's uploads.
   */
  pauseWatching: (paused: boolean): Promise<void> =>
    invoke<void>("pause_watching", { paused }),
  /**
   * Opens the native dialog to pick files (any kind) to upload as documents.
   */
  pickDocuments: (): Promise<string[]> =>
    invoke<string[]>("pick_documents"),
  /**
   * Opens the native dialog to pick sequence files (or a folder); answers the chosen paths.
   */
  pickFiles: (folder: boolean): Promise<string[]> =>
    invoke<string[]>("pick_files", { folder }),
  /**
   * Opens the native dialog to choose a folder to watch.
   */
  pickWatchFolder: (): Promise<string | null> =>
    invoke<string | null>("pick_watch_folder"),
  /**
   * Sends a `ping` event to a webhook.
   */
  pingWebhook: (id: string): Promise<void> =>
    invoke<void>("ping_webhook", { id }),
  /**
   * The profiles screen.
   */
  profiles: (): Promise<ProfilesView> =>
    invoke<ProfilesView>("profiles"),
  /**
   * A project's page: the project, its members and how many samples it holds.
   */
  project: (id: string): Promise<ProjectDetail> =>
    invoke<ProjectDetail>("project", { id }),
  /**
   * The Projects screen: own projects, those the user is a member of, and public ones.
   */
  projects: (): Promise<ProjectRow[]> =>
    invoke<ProjectRow[]>("projects"),
  /**
   * Delivers an event again now.
   */
  redeliverEvent: (id: string): Promise<void> =>
    invoke<void>("redeliver_event", { id }),
  /**
   * Forgets the samples and results the comparison view fetched, so the next comparison asks the
   * service again.
   */
  refreshComparison: (): Promise<void> =>
    invoke<void>("refresh_comparison"),
  /**
   * Starts a copy, without the host's reads, of the sample that classification `id` is of (the
   * service writes it; the new sample is `importing` until then).
   */
  removeHostReads: (id: string): Promise<HostCopy> =>
    invoke<HostCopy>("remove_host_reads", { id }),
  /**
   * Removes the organisation's logo.
   */
  removeOrganizationLogo: (): Promise<void> =>
    invoke<void>("remove_organization_logo"),
  /**
   * Forgets a remote profile and its key.
   */
  removeProfile: (name: string): Promise<ProfilesView> =>
    invoke<ProfilesView>("remove_profile", { name }),
  /**
   * Takes a member off a project.
   */
  removeProjectMember: (id: string, user: string): Promise<ProjectDetail> =>
    invoke<ProjectDetail>("remove_project_member", { id, user }),
  /**
   * Stops watching a folder (what was uploaded stays).
   */
  removeWatchFolder: (path: string): Promise<void> =>
    invoke<void>("remove_watch_folder", { path }),
  /**
   * Removes a webhook with its events.
   */
  removeWebhook: (id: string): Promise<void> =>
    invoke<void>("remove_webhook", { id }),
  /**
   * Renames a document.
   */
  renameDocument: (id: string, filename: string): Promise<DocumentsView> =>
    invoke<DocumentsView>("rename_document", { id, filename }),
  /**
   * Gives a webhook a new secret, shown once.
   */
  replaceWebhookSecret: (id: string): Promise<WebhookSecretView> =>
    invoke<WebhookSecretView>("replace_webhook_secret", { id }),
  /**
   * A password reset link for a user.
   */
  resetUserPassword: (id: string): Promise<LinkView> =>
    invoke<LinkView>("reset_user_password", { id }),
  /**
   * Ends a user's API key and sessions; what it stopped, in words.
   */
  revokeUser: (id: string): Promise<string> =>
    invoke<string>("revoke_user", { id }),
  /**
   * Runs a job on a sample; the sample page's analyses are then watched again, so the new one
   * shows up and updates live.
   */
  runJob: (sample: string, job: string, args: { [key in string]: JsonValue }, description: string | null): Promise<string> =>
    invoke<string>("run_job", { sample, job, args, description }),
  /**
   * Runs one job on every selected sample; the run's progress then arrives in `batch-changed`
   * events, and the desktop is notified when one fails and when the last ends.
   */
  runJobOnSamples: (id: string, samples: string[], job: string, args: { [key in string]: JsonValue }, description: string | null): Promise<BatchRun> =>
    invoke<BatchRun>("run_job_on_samples", { id, samples, job, args, description }),
  /**
   * The sample page; its analyses are then watched and sent in `analyses-changed` events.
   */
  sample: (id: string): Promise<SampleDetail> =>
    invoke<SampleDetail>("sample", { id }),
  /**
   * The taxa the newest controls analysis of a sample's batch calls possible contaminants.
   */
  sampleContaminants: (sampleId: string): Promise<SampleContaminants | null> =>
    invoke<SampleContaminants | null>("sample_contaminants", { sampleId }),
  /**
   * The compared samples' diversity (the comparison view's diversity and ordination tabs), with
   * its charts; fetching progress arrives in `compare-progress` events.
   */
  sampleDiversity: (request: DiversityRequest): Promise<DiversityScreen> =>
    invoke<DiversityScreen>("sample_diversity", { request }),
  /**
   * The reads' quality control of classification `id` (the sample page's quality section).
   */
  sampleQc: (id: string): Promise<QcView> =>
    invoke<QcView>("sample_qc", { id }),
  /**
   * Saves text the UI made (the taxa table as CSV) where the user chooses. Answers the path, or
   * `None` when the user cancelled.
   */
  saveCsv: (fileName: string, text: string): Promise<string | null> =>
    invoke<string | null>("save_csv", { fileName, text }),
  /**
   * Saves the reads of one taxon (and those below it) from the given samples into a folder the
   * user chooses; progress arrives in `taxon-reads-progress` events. `None` when they cancelled.
   */
  saveTaxonReads: (samples: string[], taxId: string, taxon: string): Promise<TaxonReadsProgress | null> =>
    invoke<TaxonReadsProgress | null>("save_taxon_reads", { samples, taxId, taxon }),
  /**
   * Sets the lab's name on the organisation's reports (admins and owners).
   */
  setLabName: (name: string): Promise<void> =>
    invoke<void>("set_lab_name", { name }),
  /**
   * Sets the organisation's logo from a picture read by the window (base64).
   */
  setOrganizationLogo: (base64: string): Promise<void> =>
    invoke<void>("set_organization_logo", { base64 }),
  /**
   * Sets the watcher's upload speed limit in bytes per second (none: no limit).
   */
  setUploadLimit: (limit: number | null): Promise<void> =>
    invoke<void>("set_upload_limit", { limit }),
  /**
   * Saves the taxon alert rules for every watched folder (shared with `mgds watch`).
   */
  setWatchAlerts: (rules: string[]): Promise<AlertsView> =>
    invoke<AlertsView>("set_watch_alerts", { rules }),
  /**
   * Enables or disables a webhook.
   */
  setWebhook: (id: string, enabled: boolean): Promise<void> =>
    invoke<void>("set_webhook", { id, enabled }),
  /**
   * Lets the colleague with this e-mail address download a document.
   */
  shareDocument: (id: string, email: string): Promise<DocumentsView> =>
    invoke<DocumentsView>("share_document", { id, email }),
  /**
   * Starts uploads; progress arrives in `upload-progress` events.
   */
  startUploads: (batch: UploadBatch): Promise<void> =>
    invoke<void>("start_uploads", { batch }),
  /**
   * The sunburst of classification `id` (the sample page's hierarchy).
   */
  sunburstChart: (id: string, options: SunburstControls): Promise<SunburstView> =>
    invoke<SunburstView>("sunburst_chart", { id, options }),
  /**
   * Switches to another profile.
   */
  switchProfile: (name: string): Promise<ProfilesView> =>
    invoke<ProfilesView>("switch_profile", { name }),
  /**
   * The tags with the number of samples carrying each.
   */
  tagCounts: (): Promise<TagCount[]> =>
    invoke<TagCount[]>("tag_counts"),
  /**
   * Stops a colleague downloading a document.
   */
  unshareDocument: (id: string, user: string): Promise<DocumentsView> =>
    invoke<DocumentsView>("unshare_document", { id, user }),
  /**
   * Changes a sample (visibility, project, tags, metadata).
   */
  updateSample: (id: string, change: SampleChange): Promise<SampleDetail> =>
    invoke<SampleDetail>("update_sample", { id, change }),
  /**
   * Changes a watched folder's settings.
   */
  updateWatchFolder: (original: string, folder: NewFolder): Promise<void> =>
    invoke<void>("update_watch_folder", { original, folder }),
  /**
   * Uploads files as documents; progress arrives in `document-transfer` events.
   */
  uploadDocuments: (files: DocumentFile[]): Promise<void> =>
    invoke<void>("upload_documents", { files }),
  /**
   * The taxon alert rules for every watched folder, and the alerts that fired.
   */
  watchAlerts: (): Promise<AlertsView> =>
    invoke<AlertsView>("watch_alerts"),
  /**
   * The "Watched folders" screen; changes arrive in `watch-changed` events.
   */
  watchView: (): Promise<WatchView> =>
    invoke<WatchView>("watch_view"),
  /**
   * The organisation's webhooks and newest events (admins and owners); with `problems`, only the
   * events not delivered.
   */
  webhooks: (problems: boolean): Promise<WebhooksView> =>
    invoke<WebhooksView>("webhooks", { problems }),
};

/** The events the shell sends to the window, by name, with their payloads. */
export type Events = {
  "analyses-changed": AnalysesChanged;
  "batch-changed": BatchRun;
  "compare-progress": CompareProgress;
  "document-transfer": DocumentTransfer;
  "taxon-reads-progress": TaxonReadsProgress;
  "upload-progress": UploadProgress;
  "watch-changed": WatchChanged;
};

/** Listeners for the shell's events: each resolves to the function that stops listening. */
export const events = {
  analysesChanged: (f: (payload: AnalysesChanged) => void): Promise<UnlistenFn> =>
    listen<AnalysesChanged>("analyses-changed", (e) => f(e.payload)),
  batchChanged: (f: (payload: BatchRun) => void): Promise<UnlistenFn> =>
    listen<BatchRun>("batch-changed", (e) => f(e.payload)),
  compareProgress: (f: (payload: CompareProgress) => void): Promise<UnlistenFn> =>
    listen<CompareProgress>("compare-progress", (e) => f(e.payload)),
  documentTransfer: (f: (payload: DocumentTransfer) => void): Promise<UnlistenFn> =>
    listen<DocumentTransfer>("document-transfer", (e) => f(e.payload)),
  taxonReadsProgress: (f: (payload: TaxonReadsProgress) => void): Promise<UnlistenFn> =>
    listen<TaxonReadsProgress>("taxon-reads-progress", (e) => f(e.payload)),
  uploadProgress: (f: (payload: UploadProgress) => void): Promise<UnlistenFn> =>
    listen<UploadProgress>("upload-progress", (e) => f(e.payload)),
  watchChanged: (f: (payload: WatchChanged) => void): Promise<UnlistenFn> =>
    listen<WatchChanged>("watch-changed", (e) => f(e.payload)),
};
