// Package statepg keeps bookmarks in a PostgreSQL database of the user's choosing
// (`state: {type: postgres, config: {connection_url}}`, SPEC §1.6): one table
// sluice_state, laid out like the history's, so the same database can serve as both.
// The table is created when missing, in the first schema of the URL's search_path.
package statepg
