//! Lists: pages from `Link` and `X-Total-Count`, streams of every item, filters and sorts
//! against the real service's list compiler.

use futures::TryStreamExt;
use mgds_api::{Ref, Sample, Visibility};
use mgds_client::{Error, Filter, Sort};

use super::{Service, fastq_bytes, write_file};

#[tokio::test]
async fn pages_and_the_stream_of_all_items() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    for _ in 0..23 {
        c.samples().preupload().send().await.unwrap();
    }
    let full: Vec<String> =
        c.samples().list().per_page(1000).send().await.unwrap().items.into_iter().map(|s| s.uri).collect();
    assert_eq!(full.len(), 23);

    let first = c.samples().list().per_page(5).send().await.unwrap();
    assert_eq!(first.items.len(), 5);
    assert_eq!(first.total, Some(23));
    assert_eq!((first.page, first.per_page), (1, 5));
    assert_eq!(first.next_page(), Some(2));
    assert_eq!(first.last_page(), Some(5));
    assert!(first.links.prev.is_none() && first.links.this.is_some() && first.links.first.is_some());

    let last = c.samples().list().per_page(5).page(5).send().await.unwrap();
    assert_eq!(last.items.len(), 3);
    assert_eq!(last.next_page(), None);
    assert_eq!(last.links.prev.as_deref().map(|l| l.contains("page=4")), Some(true));

    // The stream of all items, five at a time, equals the full list in order.
    let streamed: Vec<String> =
        c.samples().list().per_page(5).stream().map_ok(|s: Sample| s.uri).try_collect().await.unwrap();
    assert_eq!(streamed, full);
    // A page can become the stream of itself and all that follow.
    let second = c.samples().list().per_page(5).page(2).send().await.unwrap();
    let rest: Vec<String> = second.into_stream().map_ok(|s| s.uri).try_collect().await.unwrap();
    assert_eq!(rest, full[5..]);
    assert_eq!(c.samples().list().per_page(7).all().await.unwrap().len(), 23);

    // Past the end: an empty page, still with the total.
    let beyond = c.samples().list().per_page(5).page(9).send().await.unwrap();
    assert!(beyond.items.is_empty());
    assert_eq!(beyond.total, Some(23));
    assert_eq!(beyond.next_page(), None);
}

#[tokio::test]
async fn filters_and_sorts_reach_the_service() {
    let svc = Service::start().await;
    let alice = svc.user("alice@lab.example.org").await;
    let c = svc.client(&alice);
    let project = c.projects().create("skin_study").send().await.unwrap();
    let project_ref = Ref { uri: project.uri.clone() };
    let dir = svc.scratch();
    let mut made = Vec::new();
    for (name, in_project) in [("gut_a.fastq", false), ("GUT_b.fq", true), ("skin.fa", true)] {
        let bytes = if name.ends_with(".fa") { b">c1\nACGT\n".to_vec() } else { fastq_bytes(200 * (made.len() + 1)) };
        let path = write_file(&dir, name, &bytes);
        let mut up = c.samples().upload(&path);
        if in_project {
            up = up.project(&project);
        }
        made.push(up.send().await.unwrap());
    }
    let t0 = made[0].created_at.clone();
    let t1 = made[1].created_at.clone();

    let names = |page: mgds_client::Page<Sample>| -> Vec<String> {
        page.items.into_iter().map(|s| s.filename.unwrap_or_default()).collect()
    };
    let gut = c.samples().list().filter(Filter::new().icontains("filename", "gut")).send().await.unwrap();
    assert_eq!(names(gut), ["gut_a.fastq", "GUT_b.fq"]);
    let both = c
        .samples()
        .list()
        .filter(Filter::new().icontains("filename", "gut").eq_ref("project", &project_ref))
        .send()
        .await
        .unwrap();
    assert_eq!(names(both), ["GUT_b.fq"]);
    let early = c.samples().list().filter(Filter::new().between("created_at", t0, t1)).send().await.unwrap();
    assert_eq!(names(early), ["gut_a.fastq", "GUT_b.fq"]);
    let no_project = c.samples().list().filter(Filter::new().is_null("project")).send().await.unwrap();
    assert_eq!(names(no_project), ["gut_a.fastq"]);
    let newest_first = c.samples().list().sort(Sort::desc("created_at")).send().await.unwrap();
    assert_eq!(names(newest_first), ["skin.fa", "GUT_b.fq", "gut_a.fastq"]);
    let by_size = c.samples().list().sort(Sort::asc("size")).send().await.unwrap();
    assert_eq!(names(by_size)[0], "skin.fa");
    let private = c
        .samples()
        .list()
        .filter(Filter::new().is_in("visibility", [Visibility::Private.as_str()]).gt("size", 100))
        .send()
        .await
        .unwrap();
    assert_eq!(private.total, Some(2));
    let one = c.samples().list().filter(Filter::new().eq("$uri", made[2].uri.clone())).send().await.unwrap();
    assert_eq!(names(one), ["skin.fa"]);

    // Metadata, tags and users lists take the same parameters.
    assert_eq!(c.metadata().list().per_page(2).send().await.unwrap().total, Some(3));
    let bad = c.samples().list().filter(Filter::new().eq("colour", "blue")).send().await.unwrap_err();
    assert!(matches!(bad, Error::InvalidRequest { status: 400, .. }), "{bad:?}");
    assert!(bad.service_message().unwrap().contains("unknown field 'colour'"), "{bad}");
}
