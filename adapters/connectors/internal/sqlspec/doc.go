// Package sqlspec owns the config keys and checks every SQL sink connector (mysql,
// postgres, sqlite) shares: the field list around connection_url, table_name and
// watermark_table, the write_mode/key/create_table options, and the Check that reports
// them. Each connector keeps what differs (URL syntax, table-name rules, extra keys).
package sqlspec
