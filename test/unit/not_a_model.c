/*
 * not_a_model.c - a valid shared library without sgc_model_query: the
 * runtime must call it "not an sgc model".
 */
int sgc_test_not_a_model(int x) { return x + 1; }
