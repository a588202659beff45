//! Request bodies of arbitrary bytes read as the API's request types: a value or an error,
//! never a panic (the service's JSON extractor answers 400 or 422 with the error's words).
#![no_main]

use libfuzzer_sys::fuzz_target;

fn read<T: serde::de::DeserializeOwned>(data: &[u8]) {
    let mut de = serde_json::Deserializer::from_slice(data);
    let _ = serde_path_to_error::deserialize::<_, T>(&mut de).map(|_| de.end());
}

fuzz_target!(|data: &[u8]| {
    read::<mgds_api::InitUploadRequest>(data);
    read::<mgds_api::ProjectUpdate>(data);
    read::<mgds_api::ProjectAddUser>(data);
    read::<mgds_api::InitMultipartUploadRequest>(data);
    read::<mgds_api::UploadCallbackRequest>(data);
    read::<mgds_api::MetadataInput>(data);
});
