#include "rolly/reflect/redirects.h"

#include <gtest/gtest.h>

namespace rolly::reflect {
namespace {

TEST(RedirectsTest, EachKindInCode) {
  Redirects r;
  ASSERT_TRUE(r.AddClass("OldDoor", "Door").ok());
  ASSERT_TRUE(r.AddStruct("OldLock", "Lock").ok());
  ASSERT_TRUE(r.AddProperty("Door", "Hp", "Health").ok());
  ASSERT_TRUE(r.AddMember("Lock", "Pin", "Code").ok());
  ASSERT_TRUE(r.AddEnumValue("DoorState", "Shut", "Closed").ok());
  EXPECT_EQ(r.ResolveClass(Name("OldDoor")), Name("Door"));
  EXPECT_EQ(r.ResolveStruct(Name("OldLock")), Name("Lock"));
  EXPECT_EQ(r.ResolveProperty(Name("Door"), Name("Hp")), Name("Health"));
  EXPECT_EQ(r.ResolveMember(Name("Lock"), Name("Pin")), Name("Code"));
  EXPECT_EQ(r.ResolveEnumValue(Name("DoorState"), Name("Shut")), Name("Closed"));
  // Kinds and scopes stay apart.
  EXPECT_EQ(r.ResolveStruct(Name("OldDoor")), Name("OldDoor"));
  EXPECT_EQ(r.ResolveProperty(Name("Window"), Name("Hp")), Name("Hp"));
  EXPECT_EQ(r.ResolveClass(Name("Unrelated")), Name("Unrelated"));
}

TEST(RedirectsTest, ChainsResolve) {
  Redirects r;
  ASSERT_TRUE(r.AddClass("A", "B").ok());
  ASSERT_TRUE(r.AddClass("B", "C").ok());
  EXPECT_EQ(r.ResolveClass(Name("A")), Name("C"));
  EXPECT_EQ(r.ResolveClass(Name("B")), Name("C"));
}

TEST(RedirectsTest, CyclesAndConflictsAreRefused) {
  Redirects r;
  ASSERT_TRUE(r.AddClass("A", "B").ok());
  ASSERT_TRUE(r.AddClass("B", "C").ok());
  Status s = r.AddClass("C", "A");
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("cycle"), std::string_view::npos);
  EXPECT_EQ(r.AddClass("A", "A").code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.AddClass("A", "D").code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(r.AddClass("A", "B").ok());  // the same redirect again is fine
  EXPECT_EQ(r.ResolveClass(Name("A")), Name("C"));
}

TEST(RedirectsTest, ParsesConfigText) {
  Redirects r;
  Status s = r.Parse(
      "# renames of 1.2\n"
      "\n"
      "class OldDoor Door\r\n"
      "  struct\tOldLock   Lock\n"
      "property Door.Hp Health\n"
      "member Lock.Pin Code\n"
      "enum DoorState.Shut Closed\n");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(r.ResolveClass(Name("OldDoor")), Name("Door"));
  EXPECT_EQ(r.ResolveStruct(Name("OldLock")), Name("Lock"));
  EXPECT_EQ(r.ResolveProperty(Name("Door"), Name("Hp")), Name("Health"));
  EXPECT_EQ(r.ResolveMember(Name("Lock"), Name("Pin")), Name("Code"));
  EXPECT_EQ(r.ResolveEnumValue(Name("DoorState"), Name("Shut")), Name("Closed"));
}

TEST(RedirectsTest, BadLinesNameTheLine) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"class A B\nwidget A B\n", "line 2: unknown kind 'widget'"},
      {"class A\n", "line 1: expected"},
      {"class A B C\n", "line 1: expected"},
      {"property Door Health\n", "line 1: expected Scope.OldName"},
      {"enum .X Y\n", "line 1: expected Scope.OldName"},
      {"class A.B C\n", "line 1:"},
      {"class A B\nclass B A\n", "line 2:"},
  };
  for (const Case& c : cases) {
    Redirects r;
    Status s = r.Parse(c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << c.text;
    EXPECT_NE(s.message().find(c.expect), std::string_view::npos) << s.message();
  }
}

}  // namespace
}  // namespace rolly::reflect
