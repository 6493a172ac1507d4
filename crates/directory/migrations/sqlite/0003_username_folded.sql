-- Usernames are unique without regard to case ("Admin" beside "admin" would pass for one another in
-- lists and the audit trail): a new user is looked up by its lower-case name first, with this index.
-- Not a unique index, so that a directory holding such a pair from before still starts.
CREATE INDEX users_username_folded ON users (company, lower(username));
