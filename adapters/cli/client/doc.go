// Package client is a small HTTP client of the sluice REST API (SPEC §2.3) with the API's
// JSON shapes (the DTOs). `sluice runs …` uses it, and a test keeps the DTOs' field names
// equal to the schemas of the server's OpenAPI document.
package client
