-- A user's roles move from text columns (primary_role, a JSON array of extra roles) to a join table with
-- foreign keys: a role that a user holds cannot be deleted, and role filters are exact joins.
CREATE TABLE user_roles (
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    company   TEXT NOT NULL,
    role      TEXT NOT NULL,
    position  INTEGER NOT NULL,               -- 0: the primary role; 1, 2, ...: the extra roles in order
    PRIMARY KEY (user_id, role),
    CONSTRAINT user_roles_role_fkey FOREIGN KEY (company, role) REFERENCES roles(company, name)
);
CREATE UNIQUE INDEX user_roles_position ON user_roles (user_id, position);
CREATE INDEX user_roles_role ON user_roles (company, role);

INSERT INTO user_roles (user_id, company, role, position)
SELECT u.id, u.company, u.primary_role, 0 FROM users u
WHERE EXISTS (SELECT 1 FROM roles r WHERE r.company = u.company AND r.name = u.primary_role);

INSERT OR IGNORE INTO user_roles (user_id, company, role, position)
SELECT u.id, u.company, e.value, e.key + 1
FROM users u, json_each(u.extra_roles) AS e
WHERE e.value <> u.primary_role
  AND EXISTS (SELECT 1 FROM roles r WHERE r.company = u.company AND r.name = e.value);

ALTER TABLE users DROP COLUMN primary_role;
ALTER TABLE users DROP COLUMN extra_roles;

-- Refresh tokens, codes and login sessions of a user authenticated before this instant are void: set when
-- the password changes or the account is blocked, deactivated or re-activated.
ALTER TABLE users ADD COLUMN sessions_valid_after_ms BIGINT;

-- Whether user tokens issued to this client may call the administration API (they carry scope `admin`).
ALTER TABLE oauth_clients ADD COLUMN admin_access BOOLEAN NOT NULL DEFAULT FALSE;
