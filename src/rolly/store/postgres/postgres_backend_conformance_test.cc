// The conformance suite (store/backend_conformance.h) against PostgresBackend on the server named
// by ROLLY_TEST_PG. Every case gets a backend bound to a fresh random user key, so cases (and
// runs) never see each other's rows; the rows a case made are deleted after it.

#include <memory>
#include <string>
#include <vector>

#include "rolly/store/backend.h"
#include "rolly/store/backend_conformance.h"
#include "rolly/store/postgres/postgres_backend.h"
#include "rolly/store/postgres/postgres_test_util.h"

namespace rolly::store::conformance {
namespace {

class Postgres : public BackendUnderTest {
 public:
  explicit Postgres(std::unique_ptr<PostgresBackend> backend) : backend_(std::move(backend)) {}
  ~Postgres() override {
    backend_->WaitUntilIdle();
    if (Result<std::vector<FileName>> names = ListNow(*backend_); names.ok()) {
      for (const FileName& name : *names) (void)DeleteNow(*backend_, name);
    }
  }
  Backend& backend() override { return *backend_; }

 private:
  std::unique_ptr<PostgresBackend> backend_;
};

std::unique_ptr<BackendUnderTest> MakePostgres() {
  PostgresOptions options;
  options.conninfo = pg_test::Conninfo();
  options.user_key = pg_test::FreshUserKey("conformance-");
  options.schema = pg_test::kSchema;
  Result<std::unique_ptr<PostgresBackend>> backend = PostgresBackend::Open(std::move(options));
  if (!backend.ok()) {
    ADD_FAILURE() << "PostgresBackend::Open: " << backend.status().ToString();
    return nullptr;
  }
  return std::make_unique<Postgres>(*std::move(backend));
}

INSTANTIATE_TEST_SUITE_P(Postgres, BackendConformanceTest,
                         ::testing::Values(BackendFactory{"Postgres", MakePostgres}),
                         BackendFactoryName);

}  // namespace
}  // namespace rolly::store::conformance
