`default_nettype none
`include "chip_defs.vh"
// softmax_unit: SOFTMAX of len int8 elements (hw/ISA.md), three passes.
//
//   MAX : cycles 0 .. len read x[e] (e < len) and fold x[e-1] into the maximum mx  (len + 1)
//   EXP : cycles 0 .. len read x[e] again; x[e-1] gives e[e-1] = EXP[mx - x[e-1]], kept in the
//         row memory and added to the sum s                                          (len + 1)
//   DIV : cycles 0 .. len-1 put element i = cycle into the divider's pipeline,
//         (e[i] * 127 + (s >> 1)) / s; its quotient leaves QUO_W cycles later and is written
//         to sram[c + i] in that cycle                                           (len + QUO_W)
// `done` is high in the last write cycle. Cycle 0 is the cycle after `cmd_softmax`.
// `exp_valid` is high in each EXP cycle that looks an element up in the exp table, and
// `exp_index` is that lookup's index mx - x (the controller keeps their maximum: ev_sm_range).
module softmax_unit #(
    parameter SRAM_AW = 12,                 // SRAM address width
    parameter SM_MAX  = `SM_MAX_DEFAULT     // longest vector: depth of the row memory
) (
    input  wire               clk,
    input  wire               rst,

    // command (fields held stable by the controller while the unit runs)
    input  wire               cmd_softmax,    // one cycle: start
    input  wire [15:0]        cmd_a,
    input  wire [15:0]        cmd_c,
    input  wire [15:0]        cmd_len,        // elements, 1 .. SM_MAX
    output wire               done,           // high in the last cycle

    // observation, for the event counters: the exp-table lookup of this cycle
    output wire               exp_valid,
    output wire [7:0]         exp_index,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam SM_AW = $clog2(SM_MAX);    // row memory address width
localparam DIV_W = `DIV_W;            // the divider's operand width
localparam QUO_W = `QUO_W;            // its quotient bits and stages (ISA.md: the cycle cost)

localparam [2:0] S_IDLE  = 3'd0;
localparam [2:0] S_MAX   = 3'd1;      // pass 1: the maximum
localparam [2:0] S_EXP   = 3'd2;      // pass 2: exponentials and their sum
localparam [2:0] S_DIV   = 3'd3;      // pass 3: the divisions, one entering a cycle

localparam [DIV_W-1:0] PROB_ONE = 127;    // the output that stands for probability 1

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("SM_MAX", SM_MAX, `SM_MAX_LO, `SM_MAX_HI)
    /* verilator coverage_on */
end

reg [2:0]       state_reg, state_next;
reg [15:0]      idx_reg, idx_next;      // MAX/EXP/DIV: the pass's cycle number
reg [7:0]       mx_reg, mx_next;        // the maximum (int8)
reg [DIV_W-1:0] sum_reg, sum_next;      // s

// element e-1 of a MAX or EXP pass, read last cycle
wire [7:0]  x        = sram_rdata[7:0];
wire [15:0] elem     = idx_reg - 16'd1;
wire        pass_end = (idx_reg == cmd_len);
wire        has_elem = (idx_reg != 16'd0);

// pass 2: the exponential of element e-1 (mx >= x, so mx - x is 0 .. 255 in 8 bits)
wire [7:0]  exp_d = mx_reg - x;
wire [15:0] exp_val;
exp_lut u_exp_lut (
    .d (exp_d),
    .e (exp_val)
);

wire row_we = (state_reg == S_EXP) && has_elem;

assign exp_valid = row_we;
assign exp_index = exp_d;
wire [15:0] row_rdata;

rowmem #(
    .WIDTH (16),
    .DEPTH (SM_MAX)
) u_rowmem (
    .clk     (clk),
    .wr_en   (row_we),
    .wr_addr (elem[SM_AW-1:0]),
    .wr_data (exp_val),
    .rd_addr (idx_reg[SM_AW-1:0]),
    .rd_data (row_rdata)
);

// pass 3: the divider. Element idx enters in cycle idx (idx < len); the one leaving now
// entered QUO_W cycles ago.
wire [DIV_W-1:0] numerator = {{(DIV_W-16){1'b0}}, row_rdata} * PROB_ONE + (sum_reg >> 1);
wire             div_in    = (state_reg == S_DIV) && (idx_reg < cmd_len);
wire             div_out;
wire [QUO_W-1:0] div_quotient;
wire [DIV_W-1:0] div_remainder;

divu #(
    .DIV_W (DIV_W),
    .QUO_W (QUO_W)
) u_divu (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (div_in),
    .dividend  (numerator),
    .divisor   (sum_reg),
    .out_valid (div_out),
    .quotient  (div_quotient),
    .remainder (div_remainder)
);

wire [15:0] out_elem  = idx_reg - QUO_W[15:0];    // the element whose quotient leaves now
wire        writing   = div_out;                 // only S_DIV feeds the divider
wire        last_elem = (out_elem == cmd_len - 16'd1);

wire [16:0] rd_sum = {1'b0, cmd_a} + {1'b0, idx_reg};
wire [16:0] wr_sum = {1'b0, cmd_c} + {1'b0, out_elem};

assign done       = writing && last_elem;
assign sram_raddr = rd_sum[SRAM_AW-1:0];
assign sram_we    = writing;
assign sram_waddr = wr_sum[SRAM_AW-1:0];
assign sram_wdata = {{(32-QUO_W){1'b0}}, div_quotient};

always @* begin
    state_next = state_reg;
    idx_next   = idx_reg;
    mx_next    = mx_reg;
    sum_next   = sum_reg;
    case (state_reg)
        S_IDLE: begin
            if (cmd_softmax) begin
                state_next = S_MAX;
                idx_next   = 16'd0;
            end
        end
        S_MAX: begin
            idx_next = idx_reg + 16'd1;
            if (has_elem && ((idx_reg == 16'd1) || ($signed(x) > $signed(mx_reg)))) begin
                mx_next = x;
            end
            if (pass_end) begin
                state_next = S_EXP;
                idx_next   = 16'd0;
                sum_next   = {DIV_W{1'b0}};
            end
        end
        S_EXP: begin
            idx_next = idx_reg + 16'd1;
            if (has_elem) begin
                sum_next = sum_reg + {{(DIV_W-16){1'b0}}, exp_val};
            end
            if (pass_end) begin
                state_next = S_DIV;
                idx_next   = 16'd0;
            end
        end
        S_DIV: begin
            idx_next = idx_reg + 16'd1;
            if (done) begin
                state_next = S_IDLE;
            end
        end
        /* verilator coverage_off */    // unreachable: state_reg holds only the states above
        default: begin
            state_next = S_IDLE;
        end
        /* verilator coverage_on */
    endcase
end

// (an idle cycle without a command changes nothing: on Icarus every register copied costs, and
// the unit is idle most cycles)
always @(posedge clk) begin
    if (rst) begin
        state_reg <= S_IDLE;
        idx_reg   <= 16'd0;
        mx_reg    <= 8'd0;
        sum_reg   <= {DIV_W{1'b0}};
    end else if (state_reg != S_IDLE || cmd_softmax) begin
        state_reg <= state_next;
        idx_reg   <= idx_next;
        mx_reg    <= mx_next;
        sum_reg   <= sum_next;
    end
end

// the remainder is not needed
wire unused_softmax_unit = &{1'b0, sram_rdata[31:8], div_remainder,
                             idx_reg[15:SM_AW], elem[15:SM_AW],
                             rd_sum[16:SRAM_AW], wr_sum[16:SRAM_AW]};

endmodule

`default_nettype wire
