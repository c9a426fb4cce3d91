// The demo network and its sweep option.

#include <gtest/gtest.h>

#include "demo/rnn_demo_model.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace rnn_demo_model_test {
namespace {

TEST(RnnDemoModel, BuildsTheStack) {
  RnnDemoShape shape;
  shape.cell = "gru";
  shape.layers = 3;
  shape.hidden = 8;
  shape.steps = 6;
  shape.batch = 2;
  const Model model = rnn_demo_model(shape);
  ASSERT_EQ(model.layers.size(), 1u);
  EXPECT_EQ(model.layers[0].kind, OpKind::kGruCell);
  EXPECT_EQ(model.layers[0].stacked, 3);
  EXPECT_EQ(model.input, (Shape{6, 8}));
  EXPECT_EQ(model.output_shape(), (Shape{8}));
}

TEST(RnnDemoModel, BadShapesNameTheOption) {
  RnnDemoShape shape;
  shape.cell = "rnn";
  EXPECT_THROW(rnn_demo_model(shape), InputError);
  shape.cell = "lstm";
  shape.hidden = 0;
  try {
    rnn_demo_model(shape);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--hidden");
  }
}

TEST(RnnSweep, Parses) {
  const RnnSweep sweep = parse_rnn_sweep("hidden=256,512,4096");
  EXPECT_EQ(sweep.name, "hidden");
  EXPECT_EQ(sweep.values, (std::vector<int64_t>{256, 512, 4096}));
  EXPECT_EQ(with_swept(RnnDemoShape{}, "steps", 7).steps, 7);
}

TEST(RnnSweep, RejectsNonsense) {
  EXPECT_THROW(parse_rnn_sweep("hidden"), InputError);
  EXPECT_THROW(parse_rnn_sweep("width=1,2"), InputError);
  EXPECT_THROW(parse_rnn_sweep("hidden=1,x"), InputError);
  EXPECT_THROW(parse_rnn_sweep("hidden=0"), InputError);
  EXPECT_THROW(parse_rnn_sweep("hidden=5,"), InputError);
}

}  // namespace
}  // namespace rnn_demo_model_test
}  // namespace splitscope
