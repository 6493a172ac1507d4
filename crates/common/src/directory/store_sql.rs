// The directory store, written once and compiled for PostgreSQL and SQLite by `sql_adapters!`.
// In scope: `Db`, `Pool`, `DIALECT` and everything of `store.rs`.

pub struct SqlDirectory(pub Pool);

const USER_COLUMNS: &str = "id, company, username, first_name, last_name, salutation, email, phone, \
    automatic_update, excluded_from_user_activity, company_account_id, login_blocked, login_blocked_reason, \
    api_access, status, primary_role, extra_roles, data_access, links, password_hash, password_last_set, \
    password_last_emailed, password_not_set_reason, created_on, created_by, modified_on, modified_by, \
    last_login, login_count, failed_login_count, locked_until_ms, version";

const CLIENT_COLUMNS: &str = "client_id, company, name, secret_hash, grant_types, redirect_uris, scopes, \
    issue_refresh_token, access_token_ttl, refresh_token_ttl, secret_rotated_on, created_on, created_by, \
    modified_on, modified_by, version";

const ROLE_COLUMNS: &str =
    "company, name, description, permissions, created_on, created_by, modified_on, modified_by, version";

#[async_trait]
impl DirectoryStore for SqlDirectory {
    async fn get_company(&self, id: &str) -> Result<Option<Company>, StoreError> {
        let row = sqlx::query_as::<Db, CompanyRow>("SELECT id, name, created_on FROM companies WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.0)
            .await?;
        Ok(row.map(Company::from))
    }

    async fn ensure_company(&self, company: &Company) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>(
            "INSERT INTO companies (id, name, created_on) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&company.id)
        .bind(&company.name)
        .bind(company.created_on)
        .execute(&self.0)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn get_role(&self, company: &str, name: &str) -> Result<Option<Role>, StoreError> {
        let sql = format!("SELECT {ROLE_COLUMNS} FROM roles WHERE company = $1 AND name = $2");
        let row = sqlx::query_as::<Db, RoleRow>(&sql).bind(company).bind(name).fetch_optional(&self.0).await?;
        Ok(row.map(Role::from))
    }

    async fn insert_role(&self, role: &Role) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "INSERT INTO roles (company, name, description, permissions, created_on, created_by, modified_on, \
             modified_by, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&role.company)
        .bind(&role.name)
        .bind(&role.description)
        .bind(to_json(&role.permissions))
        .bind(role.created_on)
        .bind(&role.created_by)
        .bind(role.modified_on)
        .bind(&role.modified_by)
        .bind(role.version)
        .execute(&self.0)
        .await
        .map_err(|e| StoreError::unique(e, format!("role {}", role.name)))?;
        Ok(())
    }

    async fn update_role(&self, role: &Role) -> Result<(), StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE roles SET description = $3, permissions = $4, modified_on = $5, modified_by = $6, version = $7 \
             WHERE company = $1 AND name = $2 AND version = $8",
        )
        .bind(&role.company)
        .bind(&role.name)
        .bind(&role.description)
        .bind(to_json(&role.permissions))
        .bind(role.modified_on)
        .bind(&role.modified_by)
        .bind(role.version)
        .bind(role.version - 1)
        .execute(&self.0)
        .await?;
        if done.rows_affected() == 1 {
            Ok(())
        } else {
            Err(StoreError::Stale)
        }
    }

    async fn delete_role(&self, company: &str, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM roles WHERE company = $1 AND name = $2")
            .bind(company)
            .bind(name)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn list_roles(&self, company: &str, after: Option<&str>, limit: i64) -> Result<Vec<Role>, StoreError> {
        let sql = format!(
            "SELECT {ROLE_COLUMNS} FROM roles WHERE company = $1 AND ($2 IS NULL OR name > $2) ORDER BY name LIMIT $3"
        );
        let rows = sqlx::query_as::<Db, RoleRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(limit)
            .fetch_all(&self.0)
            .await?;
        Ok(rows.into_iter().map(Role::from).collect())
    }

    async fn list_roles_filtered(
        &self,
        company: &str,
        filter: &RoleFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Role>, StoreError> {
        let sql = format!(
            "SELECT {ROLE_COLUMNS} FROM roles WHERE company = $1 AND ($2 IS NULL OR name > $2) \
             AND ($3 IS NULL OR name = $3) \
             AND ($4 IS NULL OR EXISTS (SELECT 1 FROM users u WHERE u.company = roles.company AND u.status = $4 \
                  AND (u.primary_role = roles.name \
                       OR u.extra_roles LIKE '%\"' || REPLACE(roles.name, '_', '\\_') || '\"%' ESCAPE '\\'))) \
             ORDER BY name LIMIT $5"
        );
        let rows = sqlx::query_as::<Db, RoleRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(&filter.name)
            .bind(&filter.held_by_status)
            .bind(limit)
            .fetch_all(&self.0)
            .await?;
        Ok(rows.into_iter().map(Role::from).collect())
    }

    async fn delete_role_if_version(&self, company: &str, name: &str, version: i64) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM roles WHERE company = $1 AND name = $2 AND version = $3")
            .bind(company)
            .bind(name)
            .bind(version)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_user_if_version(&self, company: &str, username: &str, version: i64) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM users WHERE company = $1 AND username = $2 AND version = $3")
            .bind(company)
            .bind(username)
            .bind(version)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn delete_client_if_version(&self, company: &str, client_id: &str, version: i64) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM oauth_clients WHERE company = $1 AND client_id = $2 AND version = $3")
            .bind(company)
            .bind(client_id)
            .bind(version)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn get_user(&self, company: &str, username: &str) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE company = $1 AND username = $2");
        let row = sqlx::query_as::<Db, UserRow>(&sql).bind(company).bind(username).fetch_optional(&self.0).await?;
        Ok(row.map(User::from))
    }

    async fn get_user_by_id(&self, company: &str, id: &str) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE company = $1 AND id = $2");
        let row = sqlx::query_as::<Db, UserRow>(&sql).bind(company).bind(id).fetch_optional(&self.0).await?;
        Ok(row.map(User::from))
    }

    async fn insert_user(&self, u: &User) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO users ({USER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
             $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32)"
        );
        sqlx::query::<Db>(&sql)
            .bind(&u.id)
            .bind(&u.company)
            .bind(&u.username)
            .bind(&u.first_name)
            .bind(&u.last_name)
            .bind(&u.salutation)
            .bind(&u.email)
            .bind(&u.phone)
            .bind(u.automatic_update)
            .bind(u.excluded_from_user_activity)
            .bind(&u.company_account_id)
            .bind(u.login_blocked)
            .bind(&u.login_blocked_reason)
            .bind(u.api_access)
            .bind(&u.status)
            .bind(&u.primary_role)
            .bind(to_json(&u.extra_roles))
            .bind(to_json(&u.data_access))
            .bind(u.links.as_ref().map(to_json))
            .bind(&u.password_hash)
            .bind(u.password_last_set)
            .bind(u.password_last_emailed)
            .bind(&u.password_not_set_reason)
            .bind(u.created_on)
            .bind(&u.created_by)
            .bind(u.modified_on)
            .bind(&u.modified_by)
            .bind(u.last_login)
            .bind(u.login_count)
            .bind(u.failed_login_count)
            .bind(u.locked_until_ms)
            .bind(u.version)
            .execute(&self.0)
            .await
            .map_err(|e| StoreError::unique(e, format!("user {}", u.username)))?;
        Ok(())
    }

    async fn update_user(&self, u: &User) -> Result<(), StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE users SET first_name = $3, last_name = $4, salutation = $5, email = $6, phone = $7, \
             automatic_update = $8, excluded_from_user_activity = $9, company_account_id = $10, \
             login_blocked = $11, login_blocked_reason = $12, api_access = $13, status = $14, primary_role = $15, \
             extra_roles = $16, data_access = $17, links = $18, password_last_emailed = $19, \
             password_not_set_reason = $20, modified_on = $21, modified_by = $22, version = $23 \
             WHERE company = $1 AND id = $2 AND version = $24",
        )
        .bind(&u.company)
        .bind(&u.id)
        .bind(&u.first_name)
        .bind(&u.last_name)
        .bind(&u.salutation)
        .bind(&u.email)
        .bind(&u.phone)
        .bind(u.automatic_update)
        .bind(u.excluded_from_user_activity)
        .bind(&u.company_account_id)
        .bind(u.login_blocked)
        .bind(&u.login_blocked_reason)
        .bind(u.api_access)
        .bind(&u.status)
        .bind(&u.primary_role)
        .bind(to_json(&u.extra_roles))
        .bind(to_json(&u.data_access))
        .bind(u.links.as_ref().map(to_json))
        .bind(u.password_last_emailed)
        .bind(&u.password_not_set_reason)
        .bind(u.modified_on)
        .bind(&u.modified_by)
        .bind(u.version)
        .bind(u.version - 1)
        .execute(&self.0)
        .await?;
        if done.rows_affected() == 1 {
            Ok(())
        } else {
            Err(StoreError::Stale)
        }
    }

    async fn delete_user(&self, company: &str, username: &str) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM users WHERE company = $1 AND username = $2")
            .bind(company)
            .bind(username)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn list_users(
        &self,
        company: &str,
        filter: &UserFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<User>, StoreError> {
        // The role filter matches the primary role or an element of the JSON array of extra roles; the
        // array holds plain names, so a quoted-name substring test is exact.
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM users WHERE company = $1 AND ($2 IS NULL OR username > $2) \
             AND ($3 IS NULL OR status = $3) \
             AND ($4 IS NULL OR primary_role = $4 OR extra_roles LIKE $5 ESCAPE '\\') ORDER BY username LIMIT $6"
        );
        let role_pattern = filter.role.as_ref().map(|r| {
            let quoted = serde_json::to_string(r).unwrap_or_default();
            format!("%{}%", quoted.replace('%', "\\%").replace('_', "\\_"))
        });
        let rows = sqlx::query_as::<Db, UserRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(&filter.status)
            .bind(&filter.role)
            .bind(role_pattern)
            .bind(limit)
            .fetch_all(&self.0)
            .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    async fn set_password(&self, company: &str, user_id: &str, hash: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "UPDATE users SET password_hash = $3, password_last_set = $4, password_not_set_reason = NULL, \
             failed_login_count = 0, locked_until_ms = NULL WHERE company = $1 AND id = $2",
        )
        .bind(company)
        .bind(user_id)
        .bind(hash)
        .bind(at)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn record_login_success(&self, company: &str, user_id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "UPDATE users SET last_login = $3, login_count = login_count + 1, failed_login_count = 0, \
             locked_until_ms = NULL WHERE company = $1 AND id = $2",
        )
        .bind(company)
        .bind(user_id)
        .bind(at)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn record_login_failure(
        &self,
        company: &str,
        user_id: &str,
        now_ms: i64,
        lock_after: i64,
        lock_until_ms: i64,
    ) -> Result<(), StoreError> {
        // Both assignments read the row as it was; an expired lock restarts the count at this failure.
        sqlx::query::<Db>(
            "UPDATE users SET \
             failed_login_count = CASE WHEN locked_until_ms <= $3 THEN 1 ELSE failed_login_count + 1 END, \
             locked_until_ms = CASE \
               WHEN (CASE WHEN locked_until_ms <= $3 THEN 1 ELSE failed_login_count + 1 END) >= $4 THEN $5 \
               WHEN locked_until_ms <= $3 THEN NULL ELSE locked_until_ms END \
             WHERE company = $1 AND id = $2",
        )
        .bind(company)
        .bind(user_id)
        .bind(now_ms)
        .bind(lock_after)
        .bind(lock_until_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn get_client(&self, company: &str, client_id: &str) -> Result<Option<OAuthClient>, StoreError> {
        let sql = format!("SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE company = $1 AND client_id = $2");
        let row =
            sqlx::query_as::<Db, ClientRow>(&sql).bind(company).bind(client_id).fetch_optional(&self.0).await?;
        Ok(row.map(OAuthClient::from))
    }

    async fn insert_client(&self, c: &OAuthClient) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO oauth_clients ({CLIENT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
        );
        sqlx::query::<Db>(&sql)
            .bind(&c.client_id)
            .bind(&c.company)
            .bind(&c.name)
            .bind(&c.secret_hash)
            .bind(to_json(&c.grant_types))
            .bind(to_json(&c.redirect_uris))
            .bind(to_json(&c.scopes))
            .bind(c.issue_refresh_token)
            .bind(c.access_token_ttl)
            .bind(c.refresh_token_ttl)
            .bind(c.secret_rotated_on)
            .bind(c.created_on)
            .bind(&c.created_by)
            .bind(c.modified_on)
            .bind(&c.modified_by)
            .bind(c.version)
            .execute(&self.0)
            .await
            .map_err(|e| StoreError::unique(e, format!("client {}", c.client_id)))?;
        Ok(())
    }

    async fn update_client(&self, c: &OAuthClient) -> Result<(), StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE oauth_clients SET name = $3, grant_types = $4, redirect_uris = $5, scopes = $6, \
             issue_refresh_token = $7, access_token_ttl = $8, refresh_token_ttl = $9, modified_on = $10, \
             modified_by = $11, version = $12 WHERE company = $1 AND client_id = $2 AND version = $13",
        )
        .bind(&c.company)
        .bind(&c.client_id)
        .bind(&c.name)
        .bind(to_json(&c.grant_types))
        .bind(to_json(&c.redirect_uris))
        .bind(to_json(&c.scopes))
        .bind(c.issue_refresh_token)
        .bind(c.access_token_ttl)
        .bind(c.refresh_token_ttl)
        .bind(c.modified_on)
        .bind(&c.modified_by)
        .bind(c.version)
        .bind(c.version - 1)
        .execute(&self.0)
        .await?;
        if done.rows_affected() == 1 {
            Ok(())
        } else {
            Err(StoreError::Stale)
        }
    }

    async fn set_client_secret(
        &self,
        company: &str,
        client_id: &str,
        secret_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE oauth_clients SET secret_hash = $3, secret_rotated_on = $4, modified_on = $4, \
             version = version + 1 WHERE company = $1 AND client_id = $2",
        )
        .bind(company)
        .bind(client_id)
        .bind(secret_hash)
        .bind(at)
        .execute(&self.0)
        .await?;
        if done.rows_affected() == 1 {
            Ok(())
        } else {
            Err(StoreError::NotFound(format!("client {client_id}")))
        }
    }

    async fn delete_client(&self, company: &str, client_id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM oauth_clients WHERE company = $1 AND client_id = $2")
            .bind(company)
            .bind(client_id)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn list_clients(&self, company: &str, after: Option<&str>, limit: i64) -> Result<Vec<OAuthClient>, StoreError> {
        let sql = format!(
            "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE company = $1 AND ($2 IS NULL OR client_id > $2) \
             ORDER BY client_id LIMIT $3"
        );
        let rows = sqlx::query_as::<Db, ClientRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(limit)
            .fetch_all(&self.0)
            .await?;
        Ok(rows.into_iter().map(OAuthClient::from).collect())
    }
}
