// The progress and cancel hooks the studio's jobs install (transforms/observer.h): each transformation
// reports stages with fractions in order, and an observer that stops it at any of its reports leaves the
// model as it was (nothing recorded in the history).
#include "transforms/observer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "ir/commands/history.h"
#include "runtime/session.h"
#include "transforms/amp.h"
#include "transforms/convert_tensors.h"
#include "transforms/extract.h"
#include "transforms/float16.h"
#include "transforms/function_create.h"
#include "transforms/functions.h"
#include "transforms/import_layer.h"
#include "transforms/observed_run.h"
#include "transforms/set_shapes.h"
#include "transforms/transform_test_util.h"

namespace tessera::transforms {
namespace {

struct Stop {};  // not a std::exception, as the studio's JobCancelled

// Records every report; stops the work at report number `stop_at` (1-based; 0: never).
class Recorder : public Observer {
 public:
  explicit Recorder(size_t stop_at = 0) : stop_at_(stop_at) {}
  void progress(double fraction, const std::string& stage) override {
    reports.emplace_back(fraction, stage);
    if (reports.size() == stop_at_) throw Stop{};
  }
  void check() override {}
  void running(rt::Session*) override {}
  std::vector<std::pair<double, std::string>> reports;

 private:
  size_t stop_at_;
};

using Transform = std::function<void(ir::History&)>;

struct Case {
  std::string name;
  Transform run;
};

std::vector<Case> cases() {
  return {
      {"fp16", [](ir::History& h) { convert_float(h, {}); }},
      {"bf16",
       [](ir::History& h) {
         FloatConvertOptions o;
         o.to = ir::DataType::kBFloat16;
         convert_float(h, o);
       }},
      {"convert_tensors", [](ir::History& h) { convert_tensors(h, {}); }},
      {"set_shapes",
       [](ir::History& h) {
         SetShapesOptions o;
         o.dim_params.push_back({"x", 0, "batch"});
         set_shapes(h, o);
       }},
      {"function_create",
       [](ir::History& h) {
         FunctionCreateOptions o;
         o.name = "Block";
         o.nodes = {"mm", "add"};
         create_function(h, o);
       }},
      {"function_inline", [](ir::History& h) { inline_function(h, "custom:Scale"); }},
      {"function_delete", [](ir::History& h) { delete_function(h, "custom:Scale"); }},
      {"import_layer",
       [](ir::History& h) {
         ImportLayerOptions o;
         o.name = "Imported";
         import_layer(h, test::control_flow_model(), o);
       }},
      {"extract",
       [](ir::History& h) {
         ExtractOptions o;
         o.inputs = {"mm"};
         o.outputs = {"softmax"};
         Report r;
         (void)extract(h.model(), o, r);
       }},
  };
}

TEST(TransformObserver, EveryTransformationReportsStagesInOrder) {
  for (const Case& c : cases()) {
    ir::Model m = test::control_flow_model();
    ir::History h(m);
    Recorder rec;
    {
      ObserverScope scope(&rec);
      c.run(h);
    }
    ASSERT_FALSE(rec.reports.empty()) << c.name << " reported nothing";
    double last = 0;
    for (const auto& [fraction, stage] : rec.reports) {
      EXPECT_FALSE(stage.empty()) << c.name;
      EXPECT_GE(fraction, last) << c.name << ": '" << stage << "' went back";
      EXPECT_LE(fraction, 1.0) << c.name;
      last = fraction;
    }
  }
}

TEST(TransformObserver, StoppedAtAnyReportTheModelIsUntouched) {
  for (const Case& c : cases()) {
    size_t reports = 0;
    {
      ir::Model m = test::control_flow_model();
      ir::History h(m);
      Recorder rec;
      ObserverScope scope(&rec);
      c.run(h);
      reports = rec.reports.size();
    }
    for (size_t k = 1; k <= reports; ++k) {
      ir::Model m = test::control_flow_model();
      const ir::Model original = m;
      ir::History h(m);
      Recorder rec(k);
      ObserverScope scope(&rec);
      EXPECT_THROW(c.run(h), Stop) << c.name << " at report " << k;
      EXPECT_TRUE(m == original) << c.name << " stopped at report " << k << " changed the model";
      EXPECT_EQ(h.undo_count(), 0u) << c.name << " at report " << k;
    }
  }
}

TEST(TransformObserver, WithoutAnObserverNothingIsReportedAndScopesNest) {
  EXPECT_FALSE(observed());
  report_progress(0.5, "nobody listens");  // no observer: nothing happens
  check_cancel();
  Recorder outer, inner;
  {
    ObserverScope a(&outer);
    {
      ObserverScope b(&inner);
      report_progress(0.1, "inner");
      {
        QuietProgress quiet;  // a step of another transformation: no report
        report_progress(0.2, "muted");
      }
    }
    report_progress(0.3, "outer");
  }
  EXPECT_FALSE(observed());
  ASSERT_EQ(inner.reports.size(), 1u);
  EXPECT_EQ(inner.reports[0].second, "inner");
  ASSERT_EQ(outer.reports.size(), 1u);
  EXPECT_EQ(outer.reports[0].second, "outer");
}

// An observer asked to stop cancels the engine run in progress: observed_run throws the observer's stop,
// not the session's "run cancelled".
class Canceller : public Observer {
 public:
  void progress(double, const std::string&) override { check(); }
  void check() override {
    if (stop) throw Stop{};
  }
  void running(rt::Session* s) override {
    session = s;
    if (s && stop_when_running) {
      stop = true;
      s->cancel();
    }
  }
  bool stop = false, stop_when_running = false;
  rt::Session* session = nullptr;
};

TEST(TransformObserver, ObservedRunsStopWithTheObserversException) {
  ir::Model m = test::control_flow_model();
  rt::Session s(m, {.optimization = rt::OptLevel::kNone, .threads = 1});
  auto feeds = test::feeds_for(m);
  Canceller c;
  ObserverScope scope(&c);
  EXPECT_EQ(observed_run(s, feeds).size(), 1u);  // runs, and lets go of the session after
  EXPECT_EQ(c.session, nullptr);
  c.stop_when_running = true;
  EXPECT_THROW(observed_run(s, feeds), Stop);
  EXPECT_EQ(c.session, nullptr);
  c.stop_when_running = false;
  EXPECT_THROW(observed_run(s, feeds), Stop);  // already stopped: no run starts
}

// The runtime's side (rt::SessionOptions::cancel): a session whose caller's flag is set stops building,
// and starts no run, however its own cancel() flag was left.
TEST(TransformObserver, ASessionReadsItsCallersCancelFlag) {
  ir::Model m = test::control_flow_model();
  auto feeds = test::feeds_for(m);
  std::atomic<bool> flag{true};
  rt::SessionOptions o{.optimization = rt::OptLevel::kNone, .threads = 1};
  o.cancel = &flag;
  try {
    rt::Session never(m, o);
    ADD_FAILURE() << "the session was built";
  } catch (const rt::RunError& e) {
    EXPECT_EQ(std::string(e.what()), "session build cancelled");
  }
  flag = false;
  rt::Session s(m, o);
  EXPECT_EQ(s.run(feeds).size(), 1u);
  flag = true;
  try {
    s.run(feeds);
    ADD_FAILURE() << "the run started";
  } catch (const rt::RunError& e) {
    EXPECT_EQ(std::string(e.what()), "run cancelled");
  }
  flag = false;
  EXPECT_EQ(s.run(feeds).size(), 1u);
}

// amp builds its sessions with the observer's flag: set, the first session build stops.
TEST(TransformObserver, AmpSessionsTakeTheObserversCancelFlag) {
  class Flagged : public Recorder {
   public:
    const std::atomic<bool>* cancel_flag() const override { return &flag; }
    std::atomic<bool> flag{true};
  } observer;
  ir::Model m = test::control_flow_model();
  ir::History h(m);
  ObserverScope scope(&observer);
  try {
    convert_amp(h, {}, {test::feeds_for(m)});
    ADD_FAILURE() << "amp ran";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("session build cancelled"), std::string::npos) << e.what();
  }
  EXPECT_EQ(h.undo_count(), 0u);
}

}  // namespace
}  // namespace tessera::transforms
