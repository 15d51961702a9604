//! The error codes have one table, `framefeed::ErrorCode`: the guide's list (`docs/guide/errors.md`) is held to
//! it, row for row, and the library's errors give codes from it.

use framefeed::{CodeSource, Error, ErrorCode, VideoError};

/// The guide's "Error codes" table: (code, given by, refused with, what went wrong) per row.
fn guide_rows() -> Vec<[String; 4]> {
    let page = include_str!("../docs/guide/errors.md");
    let start = page
        .find("## Error codes")
        .expect("docs/guide/errors.md has an Error codes section");
    page[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| code |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect();
            cells
                .try_into()
                .unwrap_or_else(|c| panic!("a row of 4 cells: {c:?}"))
        })
        .collect()
}

#[test]
fn the_guide_lists_every_code_as_the_table_says() {
    let rows = guide_rows();
    let expected: Vec<[String; 4]> = ErrorCode::ALL
        .iter()
        .map(|code| {
            [
                format!("`{}`", code.as_str()),
                match code.source() {
                    CodeSource::Library => "library".to_owned(),
                    _ => "service".to_owned(),
                },
                code.status().map_or("—".to_owned(), |s| s.to_string()),
                code.description().to_owned(),
            ]
        })
        .collect();
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for (row, want) in rows.iter().zip(&expected) {
        assert_eq!(row, want, "docs/guide/errors.md row");
    }
}

#[test]
fn the_library_gives_codes_of_the_table() {
    let video = |error| Error::Video {
        video: framefeed::VideoRef {
            id: framefeed::VideoId(0),
            label: None,
        },
        error,
    };
    for (error, code) in [
        (video(VideoError::Empty), ErrorCode::Empty),
        (video(VideoError::NoFrames), ErrorCode::NoFrames),
        (Error::Closed, ErrorCode::Closed),
        (Error::NoData, ErrorCode::NoData),
        (Error::Config("x".into()), ErrorCode::InvalidConfig),
    ] {
        assert_eq!(error.error_code(), code);
        assert_eq!(error.code(), code.as_str());
        assert_eq!(code.source(), CodeSource::Library);
    }
}
