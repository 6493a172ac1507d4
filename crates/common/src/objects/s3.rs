//! The production object store: one bucket of an S3-protocol service (AWS S3, MinIO, Ceph, ...), reached
//! with aws-sdk-s3 at a configured endpoint. A `PutObject` replaces an object whole, which is the
//! contract's "old or new, never a part"; deleting what is not there succeeds, as S3 itself answers.
//!
//! Requests use path-style addressing unless told otherwise (most self-hosted servers have no wildcard
//! DNS for virtual hosts), and checksums only where the operation requires them, so servers that do not
//! implement the newer checksum headers still accept the uploads.

use std::ops::Range;
use std::time::SystemTime;

use async_trait::async_trait;
use aws_sdk_s3::config::{
    BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation,
};
use aws_sdk_s3::error::{DisplayErrorContext, SdkError};
use aws_sdk_s3::operation::get_object::GetObjectError;
use aws_sdk_s3::operation::head_bucket::HeadBucketError;
use aws_sdk_s3::operation::head_object::HeadObjectError;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
use aws_sdk_s3::Client;

use super::{check_key, check_prefix, Listed, ObjectError, ObjectStore, Version};
use crate::config::Confidential;

/// S3 answers at most this many keys per listing request.
const PAGE: usize = 1000;

/// Where the bucket is and how to sign requests to it.
#[derive(Debug, Clone)]
pub struct S3Options {
    /// The service's base URL, e.g. `http://minio:9000` or `https://s3.eu-west-1.amazonaws.com`.
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: Confidential,
    /// `https://<bucket>.<host>/<key>` instead of `https://<host>/<bucket>/<key>`.
    pub virtual_hosted: bool,
}

pub struct S3Store {
    client: Client,
    bucket: String,
}

fn service_error<E, R>(what: &str, err: SdkError<E, R>) -> ObjectError
where
    E: std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    ObjectError::Service(describe(what, err))
}

fn describe<E, R>(what: &str, err: SdkError<E, R>) -> String
where
    E: std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    format!("{what}: {}", DisplayErrorContext(err))
}

impl S3Store {
    /// A client for `options.bucket`; the bucket is created when it does not exist yet, so a fresh
    /// MinIO is usable at once. Fails when the service cannot be reached (`Service`: the caller may try
    /// again) or refuses the credentials (`Refused`: a wrong setting).
    pub async fn connect(options: S3Options) -> Result<S3Store, ObjectError> {
        let credentials = Credentials::new(
            &options.access_key_id,
            options.secret_access_key.expose(),
            None,
            None,
            "speech-configuration",
        );
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(options.endpoint.trim_end_matches('/'))
            .region(Region::new(options.region.clone()))
            .credentials_provider(credentials)
            .force_path_style(!options.virtual_hosted)
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
            .build();
        let store = S3Store {
            client: Client::from_conf(config),
            bucket: options.bucket,
        };
        store.ensure_bucket(&options.region).await?;
        Ok(store)
    }

    async fn ensure_bucket(&self, region: &str) -> Result<(), ObjectError> {
        match self.client.head_bucket().bucket(&self.bucket).send().await {
            Ok(_) => return Ok(()),
            Err(err) if matches!(err.as_service_error(), Some(HeadBucketError::NotFound(_))) => {}
            Err(err)
                if err
                    .raw_response()
                    .is_some_and(|r| r.status().as_u16() == 403) =>
            {
                let what = format!("bucket {} (the key was refused)", self.bucket);
                return Err(ObjectError::Refused(describe(&what, err)));
            }
            Err(err) => return Err(service_error(&format!("bucket {}", self.bucket), err)),
        }
        let mut create = self.client.create_bucket().bucket(&self.bucket);
        // us-east-1 is the one region that takes no location constraint.
        if region != "us-east-1" {
            create = create.create_bucket_configuration(
                CreateBucketConfiguration::builder()
                    .location_constraint(BucketLocationConstraint::from(region))
                    .build(),
            );
        }
        match create.send().await {
            Ok(_) => Ok(()),
            // Another replica created it first.
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_bucket_already_owned_by_you()) =>
            {
                Ok(())
            }
            Err(err) => Err(service_error(
                &format!("creating bucket {}", self.bucket),
                err,
            )),
        }
    }

    /// The object under `key` (or the non-empty `range` of it) and its ETag, if the answer has one;
    /// None when there is no object. A range that starts at or past the end of an object that is there
    /// gives no bytes.
    async fn fetch(
        &self,
        key: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<(Vec<u8>, Option<String>)>, ObjectError> {
        check_key(key)?;
        let asked = self.client.get_object().bucket(&self.bucket).key(key);
        let asked = match &range {
            Some(range) => asked.range(format!("bytes={}-{}", range.start, range.end - 1)),
            None => asked,
        };
        let object = match asked.send().await {
            Ok(object) => object,
            Err(err) if matches!(err.as_service_error(), Some(GetObjectError::NoSuchKey(_))) => {
                return Ok(None)
            }
            // 416: the range starts at or past the end of an object that is there.
            Err(SdkError::ServiceError(e))
                if range.is_some() && e.raw().status().as_u16() == 416 =>
            {
                return Ok(Some((Vec::new(), None)))
            }
            Err(err) => return Err(service_error(&format!("reading {key}"), err)),
        };
        let tag = object.e_tag().map(str::to_string);
        let body = object
            .body
            .collect()
            .await
            .map_err(|e| ObjectError::Service(format!("reading {key}: {e}")))?;
        Ok(Some((body.into_bytes().to_vec(), tag)))
    }
}

#[async_trait]
impl ObjectStore for S3Store {
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        check_key(key)?;
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| service_error(&format!("writing {key}"), e))?;
        Ok(())
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        Ok(self.fetch(key, None).await?.map(|(bytes, _)| bytes))
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, ObjectError> {
        check_key(key)?;
        match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(head) => Ok(Some(head.content_length().unwrap_or(0).max(0) as u64)),
            Err(err) if matches!(err.as_service_error(), Some(HeadObjectError::NotFound(_))) => {
                Ok(None)
            }
            Err(err) => Err(service_error(&format!("reading the size of {key}"), err)),
        }
    }

    async fn get_range(
        &self,
        key: &str,
        range: Range<u64>,
    ) -> Result<Option<Vec<u8>>, ObjectError> {
        if range.is_empty() {
            return Ok(self.size(key).await?.map(|_| Vec::new()));
        }
        Ok(self.fetch(key, Some(range)).await?.map(|(bytes, _)| bytes))
    }

    async fn put_if(
        &self,
        key: &str,
        bytes: Vec<u8>,
        version: &Version,
    ) -> Result<bool, ObjectError> {
        check_key(key)?;
        let written = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .if_match(&version.0)
            .body(ByteStream::from(bytes))
            .send()
            .await;
        match written {
            Ok(_) => Ok(true),
            // 412: the object there has another ETag, or (some servers) there is none; 404: there is
            // none (others).
            Err(SdkError::ServiceError(e)) if matches!(e.raw().status().as_u16(), 404 | 412) => {
                Ok(false)
            }
            Err(err) => Err(service_error(&format!("writing {key} if unchanged"), err)),
        }
    }

    async fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
        let Some((bytes, tag)) = self.fetch(key, None).await? else {
            return Ok(None);
        };
        // A plain read does without the ETag; a conditional write cannot.
        let tag = tag.ok_or_else(|| {
            ObjectError::Service(format!("reading {key}: the answer has no ETag"))
        })?;
        Ok(Some((bytes, Version(tag))))
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectError> {
        check_key(key)?;
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| service_error(&format!("deleting {key}"), e))?;
        Ok(())
    }

    async fn list_written(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Listed>, ObjectError> {
        check_prefix(prefix)?;
        let mut listed: Vec<Listed> = Vec::new();
        let mut after = after.map(str::to_string);
        while listed.len() < limit {
            let want = (limit - listed.len()).min(PAGE);
            let mut request = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .max_keys(want as i32);
            if !prefix.is_empty() {
                request = request.prefix(prefix);
            }
            if let Some(after) = &after {
                request = request.start_after(after);
            }
            let page = request
                .send()
                .await
                .map_err(|e| service_error(&format!("listing {prefix:?}"), e))?;
            let before = listed.len();
            listed.extend(page.contents().iter().filter_map(|o| {
                Some(Listed {
                    key: o.key()?.to_string(),
                    written: o
                        .last_modified()
                        .and_then(|t| SystemTime::try_from(*t).ok())
                        // Undated is taken as new: nothing is ever thought older than it is.
                        .unwrap_or_else(SystemTime::now),
                })
            }));
            if listed.len() == before || !page.is_truncated().unwrap_or(false) {
                break;
            }
            after = listed.last().map(|l| l.key.clone());
        }
        listed.truncate(limit);
        Ok(listed)
    }
}
