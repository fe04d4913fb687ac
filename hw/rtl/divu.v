`default_nettype none
// divu: iterative restoring unsigned divider, one quotient bit per cycle.
//
// Timing: `start` in cycle 0 loads the operands; cycles 1 .. DIV_W are the DIV_W steps (`busy`);
// in cycle DIV_W + 1 `done` is high for one cycle and quotient/remainder are valid. They stay
// valid until the next `start`.
//
// Division by zero is defined (hw/ISA.md): quotient = all ones, remainder = the dividend. The
// restoring algorithm gives exactly that with no special case: every trial subtraction of 0
// succeeds.
module divu #(
    parameter DIV_W = 32    // operand, quotient and remainder width
) (
    input  wire             clk,
    input  wire             rst,

    input  wire             start,       // load dividend and divisor (ignored while busy)
    input  wire [DIV_W-1:0] dividend,
    input  wire [DIV_W-1:0] divisor,

    output wire             busy,        // a step is running this cycle
    output reg              done,        // one cycle: the result is ready
    output wire [DIV_W-1:0] quotient,
    output wire [DIV_W-1:0] remainder
);

localparam CNT_W = $clog2(DIV_W + 1);    // width of the step counter

initial begin
    if (DIV_W < 2) begin
        $display("divu: DIV_W=%0d is too small", DIV_W);
        $finish;
    end
end

reg [DIV_W-1:0] rem_reg;       // partial remainder
reg [DIV_W-1:0] quo_reg;       // dividend bits still to use, then the quotient bits
reg [DIV_W-1:0] den_reg;       // divisor
reg [CNT_W-1:0] count_reg;     // steps left

// one restoring step: bring down the next dividend bit and try to subtract the divisor
wire [DIV_W:0]  trial    = {rem_reg, quo_reg[DIV_W-1]};
wire            fits     = trial >= {1'b0, den_reg};
wire [DIV_W:0]  trial_rm = fits ? trial - {1'b0, den_reg} : trial;

assign busy      = (count_reg != {CNT_W{1'b0}});
assign quotient  = quo_reg;
assign remainder = rem_reg;

always @(posedge clk) begin
    if (rst) begin
        rem_reg   <= {DIV_W{1'b0}};
        quo_reg   <= {DIV_W{1'b0}};
        den_reg   <= {DIV_W{1'b0}};
        count_reg <= {CNT_W{1'b0}};
        done      <= 1'b0;
    end else if (start && !busy) begin
        rem_reg   <= {DIV_W{1'b0}};
        quo_reg   <= dividend;
        den_reg   <= divisor;
        count_reg <= DIV_W[CNT_W-1:0];
        done      <= 1'b0;
    end else if (busy) begin
        // the remainder after a step is below the divisor (or, dividing by zero, is the
        // dividend's leading bits): it always fits DIV_W bits
        rem_reg   <= trial_rm[DIV_W-1:0];
        quo_reg   <= {quo_reg[DIV_W-2:0], fits};
        count_reg <= count_reg - {{(CNT_W-1){1'b0}}, 1'b1};
        done      <= (count_reg == {{(CNT_W-1){1'b0}}, 1'b1});
    end else begin
        done      <= 1'b0;
    end
end

wire unused_divu = &{1'b0, trial_rm[DIV_W]};

endmodule

`default_nettype wire
