//! Analyses: the generic collection and the typed ones (classifications, panels, alignments,
//! functional profiles), their results, and read-level downloads.

use mgds_api::{Analysis, ClassificationResults, FileDetail, FileDetails, PanelResults, ReadlevelUrl};
use serde_json::Value;

use crate::transfer::{self, Progress};
use crate::{Client, Destination, ListRequest, ResourceId, Result};

/// The routes every analysis collection shares.
#[derive(Debug, Clone)]
struct Collection {
    client: Client,
    name: &'static str,
}

impl Collection {
    fn list(&self) -> ListRequest<Analysis> {
        ListRequest::new(self.client.clone(), &[self.name])
    }

    fn list_public(&self) -> ListRequest<Analysis> {
        ListRequest::new(self.client.clone(), &[self.name, "public"])
    }

    async fn get(&self, id: &str) -> Result<Analysis> {
        self.client.get_json(self.client.api_url(&[self.name, id])).await
    }

    async fn when_complete(&self, id: &str, secs: u64) -> Result<Analysis> {
        let mut url = self.client.api_url(&[self.name, id]);
        url.query_pairs_mut().append_pair("wait", &secs.to_string());
        self.client.get_json(url).await
    }

    async fn results<T: serde::de::DeserializeOwned>(&self, id: &str) -> Result<T> {
        self.client.get_json(self.client.api_url(&[self.name, id, "results"])).await
    }
}

macro_rules! analysis_handle {
    ($(#[$doc:meta])* $name:ident, $collection:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name {
            inner: Collection,
        }

        impl $name {
            pub(crate) fn new(client: Client) -> Self {
                $name { inner: Collection { client, name: $collection } }
            }

            #[doc = concat!("The records the caller can see (`GET /", $collection, "`).")]
            pub fn list(&self) -> ListRequest<Analysis> {
                self.inner.list()
            }

            #[doc = concat!("Records of public samples (`GET /", $collection, "/public`).")]
            pub fn list_public(&self) -> ListRequest<Analysis> {
                self.inner.list_public()
            }

            #[doc = concat!("One record (`GET /", $collection, "/{id}`); an analysis of another kind is not found.")]
            pub async fn get(&self, id: impl ResourceId) -> Result<Analysis> {
                self.inner.get(id.resource_id()).await
            }

            #[doc = concat!("One record once it is complete, or after at most `secs` seconds (30 at most; `GET /", $collection, "/{id}?wait=SECS`, an MGDS addition: another service answers at once, as `get`).")]
            pub async fn when_complete(&self, id: impl ResourceId, secs: u64) -> Result<Analysis> {
                self.inner.when_complete(id.resource_id(), secs).await
            }
        }
    };
}

analysis_handle!(
    /// Analyses of every kind (`client.analyses()`).
    Analyses,
    "analyses"
);
analysis_handle!(
    /// Classifications (`client.classifications()`).
    Classifications,
    "classifications"
);
analysis_handle!(
    /// Panels (`client.panels()`).
    Panels,
    "panels"
);
analysis_handle!(
    /// Alignments (`client.alignments()`); API v1 has no routes for their statistics.
    Alignments,
    "alignments"
);
analysis_handle!(
    /// Functional profiles (`client.functional_profiles()`).
    FunctionalProfiles,
    "functional_profiles"
);

impl Analyses {
    /// The results of any finished analysis, as the service sends them
    /// (`GET /analyses/{id}/results`). An unfinished or failed one is
    /// [`Error::InvalidRequest`](crate::Error::InvalidRequest) with the reason.
    pub async fn results(&self, id: impl ResourceId) -> Result<Value> {
        self.inner.results(id.resource_id()).await
    }

    /// The output files of a finished analysis, with their sizes and pre-signed addresses
    /// (`GET /analyses/{id}/file_details`).
    pub async fn files(&self, id: impl ResourceId) -> Result<Vec<FileDetail>> {
        let c = &self.inner.client;
        let details: FileDetails = c.get_json(c.api_url(&["analyses", id.resource_id(), "file_details"])).await?;
        Ok(details.files)
    }

    /// Downloads the output file of a finished analysis (an alignment's SAM, a functional
    /// profile's table, a classification's read-level TSV) to `dest`, whole or not at all.
    /// Returns its size. An analysis with no output file (a panel) is
    /// [`Error::InvalidInput`](crate::Error::InvalidInput).
    pub async fn download_results(&self, id: impl ResourceId, dest: impl Into<Destination>) -> Result<u64> {
        let id = id.resource_id();
        let Some(file) = self.files(id).await?.into_iter().next() else {
            return Err(crate::Error::InvalidInput(format!(
                "analysis {id} has nothing to download: its only output is its results"
            )));
        };
        transfer::download_to_file(&self.inner.client, &file.url, &dest.into(), None).await
    }
}

impl Classifications {
    /// The classification table (`GET /classifications/{id}/results`).
    pub async fn results(&self, id: impl ResourceId) -> Result<ClassificationResults> {
        self.inner.results(id.resource_id()).await
    }

    /// The pre-signed address of the gzipped read-level TSV (`GET /classifications/{id}/readlevel`).
    pub async fn readlevel_url(&self, id: impl ResourceId) -> Result<ReadlevelUrl> {
        let c = &self.inner.client;
        c.get_json(c.api_url(&["classifications", id.resource_id(), "readlevel"])).await
    }

    /// The classification's report as `kraken2 --report` writes it, for Bracken, Pavian or Krona
    /// (`GET /classifications/{id}/kraken_report`, offered by MGDS services).
    pub async fn kraken_report(&self, id: impl ResourceId) -> Result<String> {
        let c = &self.inner.client;
        c.get_text(c.api_url(&["classifications", id.resource_id(), "kraken_report"])).await
    }

    /// Downloads the gzipped read-level TSV to `dest` (whole or not at all). Returns its size.
    pub async fn download_readlevel(&self, id: impl ResourceId, dest: impl Into<Destination>) -> Result<u64> {
        self.download_readlevel_with_progress(id, dest, None).await
    }

    /// [`Classifications::download_readlevel`], reporting progress.
    pub async fn download_readlevel_with_progress(
        &self,
        id: impl ResourceId,
        dest: impl Into<Destination>,
        progress: Option<Progress>,
    ) -> Result<u64> {
        let url = self.readlevel_url(id).await?;
        transfer::download_to_file(&self.inner.client, &url.url, &dest.into(), progress.as_ref()).await
    }
}

impl Panels {
    /// The panel results (`GET /panels/{id}/results`; experimental format).
    pub async fn results(&self, id: impl ResourceId) -> Result<PanelResults> {
        self.inner.results(id.resource_id()).await
    }
}

impl FunctionalProfiles {
    /// The results as the service sends them (`GET /functional_profiles/{id}/results`).
    pub async fn results(&self, id: impl ResourceId) -> Result<Value> {
        self.inner.results(id.resource_id()).await
    }
}
